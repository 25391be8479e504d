{{/*
Chart name, overridable with nameOverride.
*/}}
{{- define "nvidia-device-plugin.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name, truncated at 63 characters (the DNS label limit).
*/}}
{{- define "nvidia-device-plugin.fullname" -}}
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
{{- define "nvidia-device-plugin.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Common labels of every object; templates add app.kubernetes.io/component.
*/}}
{{- define "nvidia-device-plugin.labels" -}}
helm.sh/chart: {{ include "nvidia-device-plugin.chart" . }}
{{ include "nvidia-device-plugin.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Selector labels; the DaemonSet adds app.kubernetes.io/component: device-plugin so that it never
selects (and adopts) the `helm test` pod.
*/}}
{{- define "nvidia-device-plugin.selectorLabels" -}}
app.kubernetes.io/name: {{ include "nvidia-device-plugin.name" . | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end }}

{{/*
ServiceAccount name. The plugin talks only to the kubelet's socket, never to the API server: its
ServiceAccount has no role and no token is mounted.
*/}}
{{- define "nvidia-device-plugin.serviceAccountName" -}}
{{- include "nvidia-device-plugin.fullname" . }}
{{- end }}

{{/*
The image reference: [registry/]repository, then @digest when a digest is given, else :tag (empty:
the chart's appVersion).
*/}}
{{- define "nvidia-device-plugin.image" -}}
{{- $repository := .Values.image.repository }}
{{- with .Values.image.registry }}{{ $repository = printf "%s/%s" . $repository }}{{ end }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
The plugin's configuration file (api/config/v1 of k8s-device-plugin).
*/}}
{{- define "nvidia-device-plugin.config" -}}
{{- $c := .Values.config }}
{{- $plugin := dict "deviceListStrategy" (list $c.deviceListStrategy) }}
{{- with $c.deviceIDStrategy }}{{ $_ := set $plugin "deviceIDStrategy" . }}{{ end }}
{{- if hasKey $c "passDeviceSpecs" }}{{ $_ := set $plugin "passDeviceSpecs" $c.passDeviceSpecs }}{{ end }}
{{- $flags := dict "migStrategy" $c.migStrategy "failOnInitError" $c.failOnInitError "plugin" $plugin }}
{{- $config := dict "version" "v1" "flags" $flags }}
{{- $sharing := dict }}
{{- range $mode := list "timeSlicing" "mps" }}
{{- $s := index $.Values.sharing $mode }}
{{- if $s.enabled }}
{{- $resources := list }}
{{- range $s.resources }}
{{- $resources = append $resources (omit . "") }}
{{- end }}
{{- $_ := set $sharing $mode (dict "renameByDefault" (default false $s.renameByDefault) "failRequestsGreaterThanOne" (default false $s.failRequestsGreaterThanOne) "resources" $resources) }}
{{- end }}
{{- end }}
{{- if $sharing }}{{ $_ := set $config "sharing" $sharing }}{{ end }}
{{- toYaml $config }}
{{- end }}
