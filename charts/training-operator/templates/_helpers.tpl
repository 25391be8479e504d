{{/*
Chart name, or nameOverride; used in the app.kubernetes.io/name label.
*/}}
{{- define "training-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name of the objects: fullnameOverride, else the release name when it already contains the
chart name, else "<release>-<chart>"; at most 63 characters (a DNS label, as Service names are).
*/}}
{{- define "training-operator.fullname" -}}
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
The helm.sh/chart label value: "<chart>-<version>", "+" replaced (labels do not allow it).
*/}}
{{- define "training-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The training-operator release the image runs: operatorVersion, else the chart's appVersion. It
gates the flags an older release lacks.
*/}}
{{- define "training-operator.version" -}}
{{- .Values.operatorVersion | default .Chart.AppVersion }}
{{- end }}

{{/*
Labels of every object.
*/}}
{{- define "training-operator.labels" -}}
helm.sh/chart: {{ include "training-operator.chart" . }}
{{ include "training-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ include "training-operator.version" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tfjob-kit
{{- end }}

{{/*
Labels that select the operator pods (never change them: Deployment selectors are immutable).
*/}}
{{- define "training-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "training-operator.name" . | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end }}

{{/*
ServiceAccount the operator runs as.
*/}}
{{- define "training-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "training-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Name of the webhook Service (--webhook-service-name); the operator's certificate is issued for
<this>.<namespace>.svc.
*/}}
{{- define "training-operator.serviceName" -}}
{{- include "training-operator.fullname" . }}
{{- end }}

{{/*
Name of the Secret the operator's certificate rotator fills (--webhook-secret-name).
*/}}
{{- define "training-operator.secretName" -}}
{{- printf "%s-webhook-cert" (include "training-operator.fullname" .) }}
{{- end }}

{{/*
The ValidatingWebhookConfiguration name is fixed in the operator (it patches the caBundle of
exactly this object), so it is not derived from the release.
*/}}
{{- define "training-operator.webhookConfigurationName" -}}
validator.training-operator.kubeflow.org
{{- end }}

{{/*
The image reference: [registry/]repository, then @digest when a digest is given, else :tag.
*/}}
{{- define "training-operator.image" -}}
{{- $repository := .Values.image.repository }}
{{- with .Values.image.registry }}{{ $repository = printf "%s/%s" . $repository }}{{ end }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repository .Values.image.tag }}
{{- end }}
{{- end }}

{{/*
The manager's flags. Every flag the chart owns is listed in "training-operator.ownedFlags".
*/}}
{{- define "training-operator.args" -}}
- --enable-scheme=tfjob
{{- if .Values.gangScheduler }}
- {{ printf "--gang-scheduler-name=%v" .Values.gangScheduler | quote }}
{{- end }}
- --webhook-server-port=9443
- {{ printf "--webhook-service-name=%v" (include "training-operator.serviceName" .) | quote }}
- {{ printf "--webhook-secret-name=%v" (include "training-operator.secretName" .) | quote }}
- --metrics-bind-address=:8080
- --health-probe-bind-address=:8081
{{- if .Values.leaderElect }}
- --leader-elect
{{- end }}
{{- if .Values.watchNamespace }}
- {{ printf "--namespace=%v" .Values.watchNamespace | quote }}
{{- end }}
- {{ printf "--controller-threads=%v" (.Values.controllerThreads | default 1) | quote }}
{{- /* v1.9.0 added --kube-api-qps and --kube-api-burst: older operators exit on them. */}}
{{- if semverCompare ">=1.9.0-0" (include "training-operator.version" .) }}
- {{ printf "--kube-api-qps=%v" (.Values.kubeApiQps | default 20) | quote }}
- {{ printf "--kube-api-burst=%v" (.Values.kubeApiBurst | default 30) | quote }}
{{- end }}
{{- range .Values.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}

{{- define "training-operator.ownedFlags" -}}
enable-scheme gang-scheduler-name webhook-server-port webhook-service-name webhook-secret-name metrics-bind-address health-probe-bind-address leader-elect namespace controller-threads kube-api-qps kube-api-burst
{{- end }}

{{/*
Cross-field checks; rendering fails with a message that names the values to change.
*/}}
{{- define "training-operator.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElect) }}
{{- fail (printf "replicaCount is %d but leaderElect is false: several operators would reconcile the same TFJobs and fight over their pods; set leaderElect: true or replicaCount: 1" (int .Values.replicaCount)) }}
{{- end }}
{{- if and (not .Values.serviceAccount.create) (not .Values.serviceAccount.name) }}
{{- fail "serviceAccount.create is false but serviceAccount.name is empty: name the existing ServiceAccount the operator should run as" }}
{{- end }}
{{- if and (not .Values.image.tag) (not .Values.image.digest) }}
{{- fail "image.tag and image.digest are both empty: pin the operator image (v1-93c5489 is v1.9.4)" }}
{{- end }}
{{- if eq .Values.gangScheduler "kube-batch" }}
{{- fail "gangScheduler kube-batch: kube-batch is archived and cannot run on Kubernetes 1.22 or later; use volcano" }}
{{- end }}
{{- if eq .Values.gangScheduler "default-scheduler" }}
{{- fail "gangScheduler default-scheduler: the default scheduler does not gang-schedule; leave gangScheduler empty, or name volcano or a scheduler-plugins scheduler" }}
{{- end }}
{{- $owned := splitList " " (include "training-operator.ownedFlags" .) }}
{{- range .Values.extraArgs }}
{{- $flag := regexReplaceAll "^--?([^=]+).*$" . "${1}" }}
{{- if has $flag $owned }}
{{- fail (printf "extraArgs: %q sets --%s, which the chart sets itself; use the matching value instead (see the chart README)" . $flag) }}
{{- end }}
{{- end }}
{{- end }}
