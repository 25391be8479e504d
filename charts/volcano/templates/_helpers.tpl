{{/*
Chart name, overridable with nameOverride.
*/}}
{{- define "volcano.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name, truncated at 63 characters (the DNS label limit).
*/}}
{{- define "volcano.fullname" -}}
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
Name of a component's objects: <fullname>-<component>, truncated at 63 characters.
Takes (dict "root" $ "component" "scheduler").
*/}}
{{- define "volcano.componentName" -}}
{{- printf "%s-%s" (include "volcano.fullname" .root) .component | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Chart name and version, for the helm.sh/chart label.
*/}}
{{- define "volcano.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Common labels of every object. Takes the root context.
*/}}
{{- define "volcano.labels" -}}
helm.sh/chart: {{ include "volcano.chart" . }}
{{ include "volcano.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: volcano
{{- end }}

{{/*
Selector labels (immutable in a Deployment: never add to them). Takes the root context.
*/}}
{{- define "volcano.selectorLabels" -}}
app.kubernetes.io/name: {{ include "volcano.name" . | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end }}

{{/*
Labels of a component's objects. Takes (dict "root" $ "component" "scheduler").
*/}}
{{- define "volcano.componentLabels" -}}
{{ include "volcano.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
Selector labels of a component. Takes (dict "root" $ "component" "scheduler").
*/}}
{{- define "volcano.componentSelectorLabels" -}}
{{ include "volcano.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
ServiceAccount name of a component. Takes (dict "root" $ "component" "scheduler"); the values
key of a component is the component name (scheduler, controllers, admission).
*/}}
{{- define "volcano.serviceAccountName" -}}
{{- $sa := (index .root.Values .component).serviceAccount }}
{{- if $sa.create }}
{{- default (include "volcano.componentName" .) $sa.name }}
{{- else }}
{{- default "default" $sa.name }}
{{- end }}
{{- end }}

{{/*
Full image reference of a component. Takes (dict "root" $ "component" "scheduler"): registry (the
component's, else image.registry) / repository, then @digest when the component has one, else :tag
(the component's, else image.tag, else the chart's appVersion).
*/}}
{{- define "volcano.image" -}}
{{- $image := (index .root.Values .component).image }}
{{- $repository := printf "%s/%s" (default .root.Values.image.registry $image.registry) $image.repository }}
{{- if $image.digest }}
{{- printf "%s@%s" $repository $image.digest }}
{{- else }}
{{- printf "%s:%s" $repository (default (default .root.Chart.AppVersion .root.Values.image.tag) $image.tag) }}
{{- end }}
{{- end }}

{{/*
Admission webhook Service name; vc-webhook-manager gets it as --webhook-service-name.
*/}}
{{- define "volcano.admissionServiceName" -}}
{{- include "volcano.componentName" (dict "root" . "component" "admission") }}
{{- end }}

{{/*
TLS Secret of the admission webhook server.
*/}}
{{- define "volcano.admissionSecretName" -}}
{{- include "volcano.componentName" (dict "root" . "component" "admission-tls") }}
{{- end }}

{{/*
Annotation of the TLS Secret that records when its certificate expires (read back to rotate it).
*/}}
{{- define "volcano.certificateNotAfterAnnotation" -}}
volcano.tfjob-kit.io/certificate-not-after
{{- end }}

{{/*
Label that marks the queues of this release; the queue webhooks skip objects carrying it.
*/}}
{{- define "volcano.managedQueueLabel" -}}
volcano.tfjob-kit.io/chart-managed-queue
{{- end }}

{{/*
The webhooks vc-webhook-manager v1.14 can serve, by path (--enabled-admission). The binary looks
up a configuration named volcano-admission-service<path with / replaced by -> for each enabled
path and only fills in its caBundle, so the names are fixed by the binary, not by this chart.
*/}}
{{- define "volcano.webhookCatalog" -}}
/jobs/mutate: {kind: Mutating, name: mutatejob.volcano.sh, group: batch.volcano.sh, version: v1alpha1, resource: jobs, operations: [CREATE], sideEffects: NoneOnDryRun}
/jobs/validate: {kind: Validating, name: validatejob.volcano.sh, group: batch.volcano.sh, version: v1alpha1, resource: jobs, operations: [CREATE, UPDATE], sideEffects: NoneOnDryRun}
/podgroups/mutate: {kind: Mutating, name: mutatepodgroup.volcano.sh, group: scheduling.volcano.sh, version: v1beta1, resource: podgroups, operations: [CREATE], sideEffects: NoneOnDryRun}
/podgroups/validate: {kind: Validating, name: validatepodgroup.volcano.sh, group: scheduling.volcano.sh, version: v1beta1, resource: podgroups, operations: [CREATE], sideEffects: NoneOnDryRun}
/queues/mutate: {kind: Mutating, name: mutatequeue.volcano.sh, group: scheduling.volcano.sh, version: v1beta1, resource: queues, operations: [CREATE], sideEffects: NoneOnDryRun, skipChartQueues: true}
/queues/validate: {kind: Validating, name: validatequeue.volcano.sh, group: scheduling.volcano.sh, version: v1beta1, resource: queues, operations: [CREATE, UPDATE, DELETE], sideEffects: NoneOnDryRun, skipChartQueues: true}
/hypernodes/validate: {kind: Validating, name: validatehypernode.volcano.sh, group: topology.volcano.sh, version: v1alpha1, resource: hypernodes, operations: [CREATE, UPDATE], sideEffects: None}
/pods/mutate: {kind: Mutating, name: mutatepod.volcano.sh, group: "", version: v1, resource: pods, operations: [CREATE], sideEffects: NoneOnDryRun}
/pods/validate: {kind: Validating, name: validatepod.volcano.sh, group: "", version: v1, resource: pods, operations: [CREATE], sideEffects: NoneOnDryRun}
{{- end }}

{{/*
Container securityContext shared by the components.
*/}}
{{- define "volcano.containerSecurityContext" -}}
{{- toYaml .Values.containerSecurityContext }}
{{- end }}

{{/*
Leader-election arguments of a component. Takes (dict "root" $ "component" "scheduler").
*/}}
{{- define "volcano.leaderElectArgs" -}}
{{- $c := index .root.Values .component -}}
- {{ printf "--leader-elect=%v" $c.leaderElect | quote }}
{{- if $c.leaderElect }}
- {{ printf "--leader-elect-resource-namespace=%v" .root.Release.Namespace | quote }}
{{- end }}
{{- end }}

{{/*
Namespaced Role + RoleBinding for the leader-election Lease of a component (only with
leaderElect): coordination.k8s.io leases in the release namespace, not cluster-wide.
Takes (dict "root" $ "component" "scheduler").
*/}}
{{- define "volcano.leaderElectionRbac" -}}
{{- $c := index .root.Values .component }}
{{- if $c.leaderElect }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "volcano.componentName" (dict "root" .root "component" (printf "%s-leader-election" .component)) | quote }}
  namespace: {{ .root.Release.Namespace | quote }}
  labels:
    {{- include "volcano.componentLabels" . | nindent 4 }}
rules:
  # client-go leader election with the Lease lock: read, create, renew.
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    verbs: ["get", "create", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "volcano.componentName" (dict "root" .root "component" (printf "%s-leader-election" .component)) | quote }}
  namespace: {{ .root.Release.Namespace | quote }}
  labels:
    {{- include "volcano.componentLabels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "volcano.componentName" (dict "root" .root "component" (printf "%s-leader-election" .component)) | quote }}
subjects:
  - kind: ServiceAccount
    name: {{ include "volcano.serviceAccountName" . | quote }}
    namespace: {{ .root.Release.Namespace | quote }}
{{- end }}
{{- end }}
