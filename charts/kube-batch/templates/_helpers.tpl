{{/*
Chart name, overridable with nameOverride.
*/}}
{{- define "kube-batch.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name, truncated at 63 characters (the DNS label limit).
*/}}
{{- define "kube-batch.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Chart name and version, for the helm.sh/chart label.
*/}}
{{- define "kube-batch.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Common labels of every object.
*/}}
{{- define "kube-batch.labels" -}}
helm.sh/chart: {{ include "kube-batch.chart" . }}
{{ include "kube-batch.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: scheduler
{{- end }}

{{/*
Selector labels (immutable in a Deployment).
*/}}
{{- define "kube-batch.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kube-batch.name" . | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end }}

{{/*
ServiceAccount name.
*/}}
{{- define "kube-batch.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kube-batch.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Name of the leader-election lock (a ConfigMap): kube-batch hard-codes "kube-batch".
*/}}
{{- define "kube-batch.lockName" -}}
kube-batch
{{- end }}

{{/*
The image reference: [registry/]repository, then @digest when a digest is given, else :tag (empty:
the chart's appVersion).
*/}}
{{- define "kube-batch.image" -}}
{{- $repository := .Values.image.repository }}
{{- with .Values.image.registry }}{{ $repository = printf "%s/%s" . $repository }}{{ end }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}
