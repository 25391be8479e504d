{{/*
Chart name, or nameOverride; used in the app.kubernetes.io/name label.
*/}}
{{- define "tfjob.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name of the helper objects (claim, TensorBoard, ServiceAccount): fullnameOverride, else the
release name when it already contains the chart name, else "<release>-<chart>"; at most 63
characters.
*/}}
{{- define "tfjob.fullname" -}}
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
The helm.sh/chart label value.
*/}}
{{- define "tfjob.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of every object.
*/}}
{{- define "tfjob.labels" -}}
helm.sh/chart: {{ include "tfjob.chart" . }}
{{ include "tfjob.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tfjob-kit
{{- end }}

{{/*
Selector labels; workloads add app.kubernetes.io/component so that the TensorBoard Service never
selects training pods.
*/}}
{{- define "tfjob.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tfjob.name" . | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end }}

{{/*
ServiceAccount of the pods; empty means the namespace's default account.
*/}}
{{- define "tfjob.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "tfjob.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
An image reference from an image value (image or tensorboard.image): [registry/]repository, then
@digest when a digest is given, else :tag.
*/}}
{{- define "tfjob.image" -}}
{{- $repository := .repository }}
{{- with .registry }}{{ $repository = printf "%s/%s" . $repository }}{{ end }}
{{- if .digest }}
{{- printf "%s@%s" $repository .digest }}
{{- else }}
{{- printf "%s:%s" $repository .tag }}
{{- end }}
{{- end }}

{{/*
Name of the TFJob: the name value, else the release name.
*/}}
{{- define "tfjob.jobName" -}}
{{- default .Release.Name .Values.name }}
{{- end }}

{{/*
The checkpoint claim: the existing one, or the one the chart creates.
*/}}
{{- define "tfjob.claimName" -}}
{{- default (printf "%s-checkpoints" (include "tfjob.fullname" .)) .Values.storage.existingClaim }}
{{- end }}

{{/*
The replica types in the order they are written: (TFJob key, values key).
*/}}
{{- define "tfjob.replicaTypes" -}}
Chief:chief PS:ps Worker:worker Evaluator:evaluator
{{- end }}

{{/*
Total number of pods.
*/}}
{{- define "tfjob.totalReplicas" -}}
{{- add (int .Values.chief.replicas) (int .Values.ps.replicas) (int .Values.worker.replicas) (int .Values.evaluator.replicas) }}
{{- end }}

{{/*
Volumes shared by the training pods and TensorBoard: /tmp and the checkpoint claim.
*/}}
{{- define "tfjob.volumes" -}}
- name: tmp
  emptyDir:
    {{- with .Values.tmpSizeLimit }}
    sizeLimit: {{ . | quote }}
    {{- else }} {}
    {{- end }}
{{- if .Values.storage.enabled }}
- name: checkpoints
  persistentVolumeClaim:
    claimName: {{ include "tfjob.claimName" . | quote }}
{{- end }}
{{- end }}

{{/*
volumeMounts of /tmp and the checkpoint claim; pass (dict "root" $ "readOnly" bool).
*/}}
{{- define "tfjob.volumeMounts" -}}
{{- $v := .root.Values -}}
- name: tmp
  mountPath: /tmp
{{- if $v.storage.enabled }}
- name: checkpoints
  mountPath: {{ $v.storage.mountPath | quote }}
  {{- if $v.storage.perJobSubPath }}
  subPath: {{ include "tfjob.jobName" .root | quote }}
  {{- end }}
  {{- if .readOnly }}
  readOnly: true
  {{- end }}
{{- end }}
{{- end }}

{{/*
One entry of spec.tfReplicaSpecs; pass (dict "root" $ "spec" <chief|ps|worker|evaluator values>).
The replica restartPolicy is written on the replica only: the operator overwrites the pod
template's anyway.
*/}}
{{- define "tfjob.replicaSpec" -}}
{{- $root := .root }}
{{- $v := $root.Values }}
{{- $spec := .spec }}
{{- $gpus := int (default 0 $spec.gpus) }}
{{- $resources := deepCopy (default (dict) $spec.resources) }}
{{- if gt $gpus 0 }}
{{- $limits := default (dict) (get $resources "limits") }}
{{- $_ := set $limits "nvidia.com/gpu" $gpus }}
{{- $_ := set $resources "limits" $limits }}
{{- end }}
{{- $serviceAccount := include "tfjob.serviceAccountName" $root -}}
replicas: {{ int $spec.replicas }}
restartPolicy: {{ default $v.restartPolicy $spec.restartPolicy | quote }}
template:
  metadata:
    labels:
      {{- include "tfjob.labels" $root | nindent 6 }}
      app.kubernetes.io/component: training
      {{- with $v.podLabels }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
    {{- with $v.podAnnotations }}
    annotations:
      {{- toYaml . | nindent 6 }}
    {{- end }}
  spec:
    {{- if $v.gang.enabled }}
    schedulerName: {{ $v.gang.schedulerName | quote }}
    {{- end }}
    {{- with $serviceAccount }}
    serviceAccountName: {{ . | quote }}
    {{- end }}
    automountServiceAccountToken: {{ $v.automountServiceAccountToken | toJson }}
    {{- with $v.imagePullSecrets }}
    imagePullSecrets:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with $v.priorityClassName }}
    priorityClassName: {{ . | quote }}
    {{- end }}
    {{- if and (gt $gpus 0) $v.gpu.runtimeClassName }}
    runtimeClassName: {{ $v.gpu.runtimeClassName | quote }}
    {{- end }}
    securityContext:
      {{- toYaml $v.podSecurityContext | nindent 6 }}
    containers:
      - name: tensorflow
        image: {{ include "tfjob.image" $v.image | quote }}
        imagePullPolicy: {{ $v.image.pullPolicy | quote }}
        {{- with $v.command }}
        command:
          {{- toYaml . | nindent 10 }}
        {{- end }}
        {{- with $v.args }}
        args:
          {{- toYaml . | nindent 10 }}
        {{- end }}
        {{- with $v.env }}
        env:
          {{- toYaml . | nindent 10 }}
        {{- end }}
        ports:
          - name: tfjob-port
            containerPort: {{ int $v.port }}
            protocol: TCP
        {{- with $resources }}
        resources:
          {{- toYaml . | nindent 10 }}
        {{- end }}
        securityContext:
          {{- toYaml $v.securityContext | nindent 10 }}
        volumeMounts:
          {{- include "tfjob.volumeMounts" (dict "root" $root "readOnly" false) | nindent 10 }}
          {{- with $v.extraVolumeMounts }}
          {{- toYaml . | nindent 10 }}
          {{- end }}
    volumes:
      {{- include "tfjob.volumes" $root | nindent 6 }}
      {{- with $v.extraVolumes }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
    {{- with $v.nodeSelector }}
    nodeSelector:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with $v.affinity }}
    affinity:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- $tolerations := $v.tolerations | default list }}
    {{- if gt $gpus 0 }}
    {{- $tolerations = concat $tolerations ($v.gpu.tolerations | default list) }}
    {{- end }}
    {{- with $tolerations }}
    tolerations:
      {{- toYaml . | nindent 6 }}
    {{- end }}
{{- end }}

{{/*
Cross-field checks; rendering fails with a message that names the values to change.
*/}}
{{- define "tfjob.validate" -}}
{{- $v := .Values }}
{{- $name := include "tfjob.jobName" . }}
{{- $total := int (include "tfjob.totalReplicas" .) }}
{{- if eq $total 0 }}
{{- fail "chief, ps, worker and evaluator replicas are all 0: the TFJob would have no pods; set worker.replicas (or chief.replicas: 1)" }}
{{- end }}
{{- if and (eq (int $v.chief.replicas) 0) (eq (int $v.worker.replicas) 0) }}
{{- fail "no Chief and no Worker: PS and Evaluator never decide success, so the job would run forever; set worker.replicas or chief.replicas: 1" }}
{{- end }}
{{- if not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $name) }}
{{- fail (printf "TFJob name %q is not a DNS-1035 label (lower-case letters, digits and '-', starting with a letter): set name" $name) }}
{{- end }}
{{- $longest := "" }}
{{- range splitList " " (include "tfjob.replicaTypes" .) }}
{{- $pair := splitList ":" . }}
{{- $count := int (get $v (last $pair)).replicas }}
{{- if gt $count 0 }}
{{- $pod := printf "%s-%s-%d" $name (lower (first $pair)) (sub $count 1) }}
{{- if gt (len $pod) (len $longest) }}
{{- $longest = $pod }}
{{- end }}
{{- end }}
{{- end }}
{{- if gt (len $longest) 63 }}
{{- fail (printf "pod and Service name %q is %d characters (max 63): the operator could not create its Service and the job would hang; shorten name to at most %d characters" $longest (len $longest) (sub 63 (sub (len $longest) (len $name)))) }}
{{- end }}
{{- range list "requests" "limits" }}
{{- if hasKey (get (default (dict) $v.ps.resources) .) "nvidia.com/gpu" }}
{{- fail (printf "GPUs on PS: ps.resources.%s asks for nvidia.com/gpu, but parameter servers hold variables and do no compute, so the GPUs would sit idle; remove it and give GPUs to chief.gpus or worker.gpus" .) }}
{{- end }}
{{- end }}
{{- range list "chief" "worker" "evaluator" }}
{{- $res := default (dict) (get $v .).resources }}
{{- if or (hasKey (default (dict) $res.requests) "nvidia.com/gpu") (hasKey (default (dict) $res.limits) "nvidia.com/gpu") }}
{{- fail (printf "%s.resources sets nvidia.com/gpu: set %s.gpus instead (the chart writes the GPU limit, and the toleration and runtimeClassName GPU pods need)" . .) }}
{{- end }}
{{- end }}
{{- range $v.env }}
{{- if eq .name "TF_CONFIG" }}
{{- fail "env sets TF_CONFIG: the operator injects it for each replica (a fixed value would give every replica the same task); remove it" }}
{{- end }}
{{- end }}
{{- $decider := ternary "chief" "worker" (gt (int $v.chief.replicas) 0) }}
{{- if eq (default $v.restartPolicy (get $v $decider).restartPolicy) "Always" }}
{{- fail (printf "restartPolicy Always on %s, which decides success: it restarts even after exiting 0, so the job never succeeds; use OnFailure or ExitCode" $decider) }}
{{- end }}
{{- if and (eq $v.successPolicy "AllWorkers") (eq (int $v.worker.replicas) 0) }}
{{- fail "successPolicy AllWorkers needs workers: set worker.replicas or leave successPolicy empty" }}
{{- end }}
{{- if and $v.tensorboard.enabled (not $v.storage.enabled) }}
{{- fail "tensorboard.enabled needs storage.enabled: TensorBoard reads the summaries the replicas write to the checkpoint claim; enable storage (existingClaim or a created claim)" }}
{{- end }}
{{- if $v.gang.enabled }}
{{- if gt (int $v.gang.minAvailable) $total }}
{{- fail (printf "gang.minAvailable %d exceeds the %d pods of the job: the gang could never be placed and every pod would stay Pending; set it to %d or less (0 = all)" (int $v.gang.minAvailable) $total $total) }}
{{- end }}
{{- else if or $v.gang.queue $v.gang.priorityClass (gt (int $v.gang.minAvailable) 0) }}
{{- fail "gang.queue, gang.priorityClass or gang.minAvailable is set but gang.enabled is false: they only take effect with gang scheduling; set gang.enabled: true" }}
{{- end }}
{{- if and $v.storage.enabled (not $v.storage.existingClaim) (not $v.storage.size) }}
{{- fail "storage.enabled with no existingClaim needs storage.size for the claim the chart creates" }}
{{- end }}
{{- end }}
