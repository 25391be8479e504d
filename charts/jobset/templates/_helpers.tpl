{{/*
Chart name, or nameOverride; used in the app.kubernetes.io/name label.
*/}}
{{- define "jobset.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name of the objects: fullnameOverride, else the release name when it already contains the
chart name, else "<release>-<chart>"; at most 52 characters, so that the names derived from it
("-webhook-cert" and the like) stay DNS labels.
*/}}
{{- define "jobset.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The helm.sh/chart label value: "<chart>-<version>", "+" replaced (labels do not allow it).
*/}}
{{- define "jobset.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of every object.
*/}}
{{- define "jobset.labels" -}}
helm.sh/chart: {{ include "jobset.chart" . }}
{{ include "jobset.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tfjob-kit
{{- end }}

{{/*
Labels that select the controller pods (never change them: Deployment selectors are immutable).
*/}}
{{- define "jobset.selectorLabels" -}}
app.kubernetes.io/name: {{ include "jobset.name" . | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end }}

{{/*
ServiceAccount the controller runs as.
*/}}
{{- define "jobset.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "jobset.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The webhook Service (internalCertManagement.webhookServiceName): the certificate is issued for
<this>.<namespace>.svc.
*/}}
{{- define "jobset.serviceName" -}}
{{- printf "%s-webhook" (include "jobset.fullname" .) }}
{{- end }}

{{/*
The Secret the controller's certificate rotator fills (internalCertManagement.webhookSecretName).
*/}}
{{- define "jobset.secretName" -}}
{{- printf "%s-webhook-cert" (include "jobset.fullname" .) }}
{{- end }}

{{/*
The ConfigMap holding the controller's Configuration.
*/}}
{{- define "jobset.configName" -}}
{{- printf "%s-config" (include "jobset.fullname" .) }}
{{- end }}

{{/*
The webhook configuration names are fixed in the controller (its certificate rotator injects the
caBundle into exactly these objects, pkg/util/cert/cert.go), so they are not derived from the
release.
*/}}
{{- define "jobset.validatingConfigurationName" -}}
jobset-validating-webhook-configuration
{{- end }}

{{- define "jobset.mutatingConfigurationName" -}}
jobset-mutating-webhook-configuration
{{- end }}

{{/*
The leader election Lease (the Configuration's default leaderElection.resourceName).
*/}}
{{- define "jobset.leaseName" -}}
6d4f6a47.jobset.x-k8s.io
{{- end }}

{{/*
The image reference: [registry/]repository, then @digest when a digest is given, else :tag.
*/}}
{{- define "jobset.image" -}}
{{- $repository := .Values.image.repository }}
{{- with .Values.image.registry }}{{ $repository = printf "%s/%s" . $repository }}{{ end }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repository .Values.image.tag }}
{{- end }}
{{- end }}

{{/*
The controller's Configuration (config.jobset.x-k8s.io/v1alpha1), as JSON (a YAML subset), so
that no value can change its shape.
*/}}
{{- define "jobset.configuration" -}}
{{- $config := dict
  "apiVersion" "config.jobset.x-k8s.io/v1alpha1"
  "kind" "Configuration"
  "leaderElection" (dict "leaderElect" .Values.leaderElect "resourceName" (include "jobset.leaseName" .))
  "clientConnection" (dict "qps" .Values.kubeApiQps "burst" (int64 .Values.kubeApiBurst))
  "internalCertManagement" (dict "enable" true "webhookServiceName" (include "jobset.serviceName" .) "webhookSecretName" (include "jobset.secretName" .))
  "webhook" (dict "port" 9443)
  "metrics" (dict "bindAddress" (ternary ":8443" "0" .Values.metrics.enabled))
  "health" (dict "healthProbeBindAddress" ":8081")
}}
{{- with .Values.featureGates }}
{{- $_ := set $config "featureGates" . }}
{{- end }}
{{- toJson $config }}
{{- end }}

{{/*
Cross-field checks; rendering fails with a message that names the values to change.
*/}}
{{- define "jobset.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElect) }}
{{- fail (printf "replicaCount is %d but leaderElect is false: several controllers would reconcile the same JobSets; set leaderElect: true or replicaCount: 1" (int .Values.replicaCount)) }}
{{- end }}
{{- if and (not .Values.serviceAccount.create) (not .Values.serviceAccount.name) }}
{{- fail "serviceAccount.create is false but serviceAccount.name is empty: name the existing ServiceAccount the controller should run as" }}
{{- end }}
{{- if and (not .Values.image.tag) (not .Values.image.digest) }}
{{- fail "image.tag and image.digest are both empty: pin the JobSet image (v0.12.0)" }}
{{- end }}
{{- end }}
