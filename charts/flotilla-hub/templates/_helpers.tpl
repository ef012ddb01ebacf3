{{/* Names. The hub's roles keep the fixed name flotilla-hub, which `flotilla hub --help` and
config/rbac name; one hub per cluster. */}}
{{- define "flotilla-hub.name" -}}flotilla-hub{{- end -}}

{{- define "flotilla-hub.labels" -}}
app.kubernetes.io/name: flotilla-hub
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: flotilla
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "flotilla-hub.selector" -}}
app.kubernetes.io/name: flotilla-hub
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "flotilla-hub.image" -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}

{{- define "flotilla-hub.webhookService" -}}flotilla-hub-webhook{{- end -}}
{{- define "flotilla-hub.webhookSecret" -}}flotilla-hub-webhook-tls{{- end -}}
{{- define "flotilla-hub.dashboardSecret" -}}flotilla-hub-dashboard-tls{{- end -}}
{{- define "flotilla-hub.dashboardSessionSecret" -}}flotilla-hub-dashboard-session{{- end -}}

{{/* validate fails with the value and the fix for what the schema cannot say. */}}
{{- define "flotilla-hub.validate" -}}
{{- $seen := dict -}}
{{- range $name, $port := .Values.ports -}}
{{- $key := toString $port -}}
{{- if hasKey $seen $key -}}
{{- fail (printf "ports.%s and ports.%s are both %s: give each of the hub's ports a different number" (get $seen $key) $name $key) -}}
{{- end -}}
{{- $_ := set $seen $key $name -}}
{{- end -}}
{{- if and (not .Values.webhook.certManager.enabled) .Values.webhook.certManager.issuerRef -}}
{{- fail "webhook.certManager.issuerRef is set but webhook.certManager.enabled is false: set enabled: true to use the issuer, or remove issuerRef" -}}
{{- end -}}
{{- end -}}
