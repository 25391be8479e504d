{{/*
Chart name, or nameOverride; used in the app.kubernetes.io/name label.
*/}}
{{- define "trainer.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name of the objects: fullnameOverride, else the release name when it already contains the
chart name, else "<release>-<chart>"; at most 52 characters, so that the names derived from it
("-webhook-cert" and the like) stay DNS labels.
*/}}
{{- define "trainer.fullname" -}}
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
{{- define "trainer.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of every object.
*/}}
{{- define "trainer.labels" -}}
helm.sh/chart: {{ include "trainer.chart" . }}
{{ include "trainer.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tfjob-kit
{{- end }}

{{/*
Labels that select the controller pods (never change them: Deployment selectors are immutable).
*/}}
{{- define "trainer.selectorLabels" -}}
app.kubernetes.io/name: {{ include "trainer.name" . | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end }}

{{/*
ServiceAccount the controller runs as.
*/}}
{{- define "trainer.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "trainer.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The webhook Service (certManagement.webhookServiceName): the certificate is issued for
<this>.<namespace>.svc.
*/}}
{{- define "trainer.serviceName" -}}
{{- printf "%s-webhook" (include "trainer.fullname" .) }}
{{- end }}

{{/*
The Secret the controller's certificate rotator fills (certManagement.webhookSecretName).
*/}}
{{- define "trainer.secretName" -}}
{{- printf "%s-webhook-cert" (include "trainer.fullname" .) }}
{{- end }}

{{/*
The ConfigMap holding the controller's Configuration.
*/}}
{{- define "trainer.configName" -}}
{{- printf "%s-config" (include "trainer.fullname" .) }}
{{- end }}

{{/*
The webhook configuration names are fixed in the controller (its certificate rotator injects the
caBundle into exactly these objects, cmd/trainer-controller-manager/main.go), so they are not
derived from the release.
*/}}
{{- define "trainer.validatingConfigurationName" -}}
validator.trainer.kubeflow.org
{{- end }}

{{- define "trainer.mutatingConfigurationName" -}}
defaulter.trainer.kubeflow.org
{{- end }}

{{/*
The leader election Lease (the Configuration's default leaderElection.resourceName).
*/}}
{{- define "trainer.leaseName" -}}
trainer.kubeflow.org
{{- end }}

{{/*
The image reference: [registry/]repository, then @digest when a digest is given, else :tag.
*/}}
{{- define "trainer.image" -}}
{{- $repository := .Values.image.repository }}
{{- with .Values.image.registry }}{{ $repository = printf "%s/%s" . $repository }}{{ end }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repository .Values.image.tag }}
{{- end }}
{{- end }}

{{/*
The controller's Configuration (config.trainer.kubeflow.org/v1alpha1), as JSON (a YAML subset),
so that no value can change its shape. Leader election's durations are the module's
(manifests/base/manager/controller_manager_config.yaml): the controller passes them to the manager
as they are, with no defaults of its own.
*/}}
{{- define "trainer.configuration" -}}
{{- $election := dict "leaderElect" .Values.leaderElect "resourceName" (include "trainer.leaseName" .) "leaseDuration" "15s" "renewDeadline" "10s" "retryPeriod" "2s" }}
{{- $config := dict
  "apiVersion" "config.trainer.kubeflow.org/v1alpha1"
  "kind" "Configuration"
  "leaderElection" $election
  "clientConnection" (dict "qps" .Values.kubeApiQps "burst" (int64 .Values.kubeApiBurst))
  "certManagement" (dict "enable" true "webhookServiceName" (include "trainer.serviceName" .) "webhookSecretName" (include "trainer.secretName" .))
  "webhook" (dict "port" 9443)
  "metrics" (dict "bindAddress" (ternary ":8443" "0" .Values.metrics.enabled) "secureServing" true)
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
{{- define "trainer.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElect) }}
{{- fail (printf "replicaCount is %d but leaderElect is false: several controllers would reconcile the same TrainJobs; set leaderElect: true or replicaCount: 1" (int .Values.replicaCount)) }}
{{- end }}
{{- if and (not .Values.serviceAccount.create) (not .Values.serviceAccount.name) }}
{{- fail "serviceAccount.create is false but serviceAccount.name is empty: name the existing ServiceAccount the controller should run as" }}
{{- end }}
{{- if and (not .Values.image.tag) (not .Values.image.digest) }}
{{- fail "image.tag and image.digest are both empty: pin the Kubeflow Trainer image (v2.3.0)" }}
{{- end }}
{{- end }}
