{{- define "flotilla-agent.labels" -}}
app.kubernetes.io/name: flotilla-agent
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: flotilla
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "flotilla-agent.selector" -}}
app.kubernetes.io/name: flotilla-agent
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "flotilla-agent.bootstrapSecret" -}}
{{- default "bootstrap-hub-kubeconfig" .Values.bootstrapSecret.existing -}}
{{- end -}}

{{/* validate fails with the value and the fix for what the schema cannot say. */}}
{{- define "flotilla-agent.validate" -}}
{{- if ne .Release.Namespace "open-cluster-management-agent" -}}
{{- fail (printf "the release namespace is %s: install flotilla-agent in open-cluster-management-agent (helm install --namespace open-cluster-management-agent --create-namespace), where the agent keeps its hub credentials" .Release.Namespace) -}}
{{- end -}}
{{- if and (not .Values.bootstrapSecret.existing) (not .Values.clusterName) -}}
{{- fail "clusterName is empty: set it to the cluster's name on the hub (a DNS label), e.g. --set clusterName=gpu-east" -}}
{{- end -}}
{{- if and (not .Values.bootstrapSecret.existing) (not .Values.bootstrapKubeconfig) -}}
{{- fail "bootstrapKubeconfig is empty: pass the kubeconfig `flotilla init` wrote (--set-file bootstrapKubeconfig=bootstrap.kubeconfig), or name your Secret in bootstrapSecret.existing" -}}
{{- end -}}
{{- end -}}
