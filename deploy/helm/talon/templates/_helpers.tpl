{{- define "talon.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "talon.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "talon.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "talon.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "talon.keysSecret" -}}
{{- .Values.keys.existingSecret | default (printf "%s-keys" (include "talon.fullname" .)) -}}
{{- end -}}

{{- define "talon.postgresSecret" -}}
{{- .Values.postgres.existingSecret | default (printf "%s-postgres" (include "talon.fullname" .)) -}}
{{- end -}}

{{- define "talon.serverUrl" -}}
http://{{ include "talon.fullname" . }}-server:{{ .Values.server.grpcPort }}
{{- end -}}
