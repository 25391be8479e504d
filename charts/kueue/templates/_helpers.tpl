{{/*
Chart name, or nameOverride; used in the app.kubernetes.io/name label.
*/}}
{{- define "kueue.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name of the objects: fullnameOverride, else the release name when it already contains the
chart name, else "<release>-<chart>"; at most 30 characters, so that the webhook configuration
names Kueue derives from it ("-validating-webhook-configuration") stay within 63.
*/}}
{{- define "kueue.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 30 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 30 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 30 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The helm.sh/chart label value: "<chart>-<version>", "+" replaced (labels do not allow it).
*/}}
{{- define "kueue.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of every object.
*/}}
{{- define "kueue.labels" -}}
helm.sh/chart: {{ include "kueue.chart" . }}
{{ include "kueue.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tfjob-kit
{{- end }}

{{/*
Labels that select the controller pods (never change them: Deployment selectors are immutable).
*/}}
{{- define "kueue.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kueue.name" . | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end }}

{{/*
ServiceAccount the controller runs as.
*/}}
{{- define "kueue.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kueue.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The webhook Service (internalCertManagement.webhookServiceName): the certificate is issued for
<this>.<namespace>.svc, and Kueue names the webhook configurations it injects the CA into after
it, less the "-webhook-service" suffix (pkg/util/cert).
*/}}
{{- define "kueue.serviceName" -}}
{{- printf "%s-webhook-service" (include "kueue.fullname" .) }}
{{- end }}

{{/*
The Secret the controller's certificate rotator fills (internalCertManagement.webhookSecretName).
*/}}
{{- define "kueue.secretName" -}}
{{- printf "%s-webhook-server-cert" (include "kueue.fullname" .) }}
{{- end }}

{{/*
The ConfigMap holding the controller's Configuration.
*/}}
{{- define "kueue.configName" -}}
{{- printf "%s-manager-config" (include "kueue.fullname" .) }}
{{- end }}

{{- define "kueue.validatingConfigurationName" -}}
{{- printf "%s-validating-webhook-configuration" (include "kueue.fullname" .) }}
{{- end }}

{{- define "kueue.mutatingConfigurationName" -}}
{{- printf "%s-mutating-webhook-configuration" (include "kueue.fullname" .) }}
{{- end }}

{{/*
The leader election Lease (the Configuration's default leaderElection.resourceName).
*/}}
{{- define "kueue.leaseName" -}}
c1f6bfd2.kueue.x-k8s.io
{{- end }}

{{/*
The image reference: [registry/]repository, then @digest when a digest is given, else :tag.
*/}}
{{- define "kueue.image" -}}
{{- $repository := .Values.image.repository }}
{{- with .Values.image.registry }}{{ $repository = printf "%s/%s" . $repository }}{{ end }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repository .Values.image.tag }}
{{- end }}
{{- end }}

{{/*
The namespaces whose jobs Kueue's webhooks never see (the module's kustomization: kube-system
and Kueue's own), as the webhooks' namespaceSelector and the Configuration's
managedJobsNamespaceSelector.
*/}}
{{- define "kueue.jobNamespaceSelector" -}}
{{- $names := list "kube-system" .Release.Namespace | uniq }}
{{- toJson (dict "matchExpressions" (list (dict "key" "kubernetes.io/metadata.name" "operator" "NotIn" "values" $names))) }}
{{- end }}

{{/*
The controller's Configuration (config.kueue.x-k8s.io/v1beta2), as JSON (a YAML subset), so that
no value can change its shape. VisibilityOnDemand is off: no APIService is installed.
*/}}
{{- define "kueue.configuration" -}}
{{- $gates := merge (dict "VisibilityOnDemand" false) (deepCopy .Values.featureGates) }}
{{- if not .Values.waitForPodsReady.enabled }}
{{- $_ := set $gates "DisableWaitForPodsReady" true }}
{{- end }}
{{- $config := dict
  "apiVersion" "config.kueue.x-k8s.io/v1beta2"
  "kind" "Configuration"
  "namespace" .Release.Namespace
  "leaderElection" (dict "leaderElect" .Values.leaderElect "resourceName" (include "kueue.leaseName" .))
  "clientConnection" (dict "qps" .Values.kubeApiQps "burst" (int64 .Values.kubeApiBurst))
  "internalCertManagement" (dict "enable" true "webhookServiceName" (include "kueue.serviceName" .) "webhookSecretName" (include "kueue.secretName" .))
  "webhook" (dict "port" 9443)
  "metrics" (dict "bindAddress" (ternary ":8443" "0" .Values.metrics.enabled))
  "health" (dict "healthProbeBindAddress" ":8081")
  "manageJobsWithoutQueueName" false
  "managedJobsNamespaceSelector" (include "kueue.jobNamespaceSelector" . | fromJson)
  "integrations" (dict "frameworks" .Values.integrations)
  "featureGates" $gates
}}
{{- if .Values.waitForPodsReady.enabled }}
{{- $_ := set $config "waitForPodsReady" (dict "timeout" .Values.waitForPodsReady.timeout "blockAdmission" .Values.waitForPodsReady.blockAdmission) }}
{{- end }}
{{- toJson $config }}
{{- end }}

{{/*
Cross-field checks; rendering fails with a message that names the values to change.
*/}}
{{- define "kueue.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElect) }}
{{- fail (printf "replicaCount is %d but leaderElect is false: several controllers would admit the same workloads; set leaderElect: true or replicaCount: 1" (int .Values.replicaCount)) }}
{{- end }}
{{- if and (not .Values.serviceAccount.create) (not .Values.serviceAccount.name) }}
{{- fail "serviceAccount.create is false but serviceAccount.name is empty: name the existing ServiceAccount the controller should run as" }}
{{- end }}
{{- if and (not .Values.image.tag) (not .Values.image.digest) }}
{{- fail "image.tag and image.digest are both empty: pin the Kueue image (v0.19.2)" }}
{{- end }}
{{- if hasKey .Values.featureGates "VisibilityOnDemand" }}
{{- if index .Values.featureGates "VisibilityOnDemand" }}
{{- fail "featureGates.VisibilityOnDemand cannot be true: this chart installs no visibility APIService, so the API it serves would be unreachable" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The ServiceAccount a MultiKueue manager uses on this worker cluster (multikueue.worker).
*/}}
{{- define "kueue.multikueueServiceAccountName" -}}
{{- printf "%s-multikueue" (include "kueue.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
