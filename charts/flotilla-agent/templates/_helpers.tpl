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
{{- range .Values.work.restricted.namespaces -}}
{{- if or (eq . $.Release.Namespace) (eq . "open-cluster-management-agent-addon") (has . $.Values.addOnInstallNamespaces) -}}
{{- fail (printf "work.restricted.namespaces lists %s, where the agent keeps credentials (its own or an add-on's): a work that may create workloads there could mount those Secrets; list only the namespaces works may use" .) -}}
{{- end -}}
{{- end -}}
{{- range .Values.policy.enforce.namespaces -}}
{{- if or (eq . $.Release.Namespace) (eq . "open-cluster-management-agent-addon") (has . $.Values.addOnInstallNamespaces) -}}
{{- fail (printf "policy.enforce.namespaces lists %s, where the agent keeps credentials (its own or an add-on's): a policy that may create workloads there could mount those Secrets; list only the namespaces policies may enforce in" .) -}}
{{- end -}}
{{- end -}}
{{- if and (or .Values.policy.enforce.namespaces .Values.policy.enforce.clusterWide) (not .Values.policy.enforce.clusterRole) -}}
{{- fail "policy.enforce.namespaces or policy.enforce.clusterWide is set but policy.enforce.clusterRole is empty: name the ClusterRole enforce may act with (edit, say), or remove them" -}}
{{- end -}}
{{- if and .Values.work.restricted.namespaces (ne .Values.work.mode "Restricted") -}}
{{- fail "work.restricted.namespaces is set but work.mode is OCM: set work.mode=Restricted to use it, or remove it" -}}
{{- end -}}
{{- if and (not .Values.bootstrapSecret.existing) (not .Values.bootstrapKubeconfig) -}}
{{- fail "bootstrapKubeconfig is empty: pass the kubeconfig `flotilla init` wrote (--set-file bootstrapKubeconfig=bootstrap.kubeconfig), or name your Secret in bootstrapSecret.existing" -}}
{{- end -}}
{{- end -}}

{{/* secretNamespaces are the namespaces where the agent reads and writes Secrets: its own (its hub
credentials), OCM's add-on namespace and the add-on install namespaces the values list. */}}
{{- define "flotilla-agent.secretNamespaces" -}}
{{- $ns := list .Release.Namespace -}}
{{- if .Values.addOnNamespace -}}{{- $ns = append $ns "open-cluster-management-agent-addon" -}}{{- end -}}
{{- $ns = concat $ns .Values.addOnInstallNamespaces | uniq -}}
{{- toJson $ns -}}
{{- end -}}
