package addontemplate

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// The built-in variables of a template, as OCM's template agent defines them. CLUSTER_NAME and
// INSTALL_NAMESPACE cannot be overridden; HUB_KUBECONFIG (defined when the template has a
// registration) can be, by a customized variable of the same name.
const (
	VarClusterName      = "CLUSTER_NAME"
	VarHubKubeconfig    = "HUB_KUBECONFIG"
	VarInstallNamespace = "INSTALL_NAMESPACE"
	// HubKubeconfigPath is where the agent's hub kubeconfig Secret is mounted (OCM's path).
	HubKubeconfigPath = hubKubeconfigMountPath + "/kubeconfig"

	hubKubeconfigMountPath = "/managed/hub-kubeconfig"
)

// Input is what one add-on's agent manifests are rendered from.
type Input struct {
	// Cluster is the managed cluster's name; Addon the add-on's.
	Cluster, Addon string
	Template       *addonv1alpha1.AddOnTemplate
	// Config is the add-on's AddOnDeploymentConfig, nil without one.
	Config *addonv1alpha1.AddOnDeploymentConfig
}

// Rendered is the ManifestWork spec of one add-on's agent and what the hub reports from it.
type Rendered struct {
	// Template is the name of the AddOnTemplate rendered.
	Template string
	Spec     workv1.ManifestWorkSpec
	// Workloads are the Deployments and DaemonSets whose status feedback says whether the agent
	// is available.
	Workloads []workv1.ResourceIdentifier
	// InstallNamespace is the agent's namespace on the spoke, where its hub credentials go: the
	// AddOnDeploymentConfig's agentInstallNamespace, else the namespace of the first Deployment
	// (else DaemonSet) of the manifests, else OCM's default (OCM's registration namespace).
	InstallNamespace string
}

// RenderError is a template that cannot be rendered: the field that is wrong and why.
type RenderError struct {
	// Field is the path of the manifest in the AddOnTemplate, e.g. spec.agentSpec.workload.manifests[1].
	Field string
	// What names the manifest (kind namespace/name) when it could be read.
	What string
	// Variables are the undefined variables the manifest uses, if that is the problem.
	Variables []string
	Err       error
}

func (e *RenderError) Error() string {
	where := e.Field
	if e.What != "" {
		where += " (" + e.What + ")"
	}
	if len(e.Variables) > 0 {
		vars := make([]string, len(e.Variables))
		for i, v := range e.Variables {
			vars[i] = "{{" + v + "}}"
		}
		return fmt.Sprintf("%s uses undefined variable %s: define it in the AddOnDeploymentConfig's spec.customizedVariables, or use a built-in one (%s, %s, %s)",
			where, strings.Join(vars, ", "), VarClusterName, VarHubKubeconfig, VarInstallNamespace)
	}
	return fmt.Sprintf("%s: %v", where, e.Err)
}

// variables are a template's values: what each {{NAME}} becomes, and the preset ones OCM also
// adds to every container of the agent's workloads as environment variables, in OCM's order.
type variables struct {
	values map[string]string
	preset []string
}

// templateVariables are in's values with OCM's precedence: the defaults (HUB_KUBECONFIG with a
// registration), then the AddOnDeploymentConfig's customized variables, then the built-ins
// CLUSTER_NAME and INSTALL_NAMESPACE, which nothing overrides.
//
// OCM defines INSTALL_NAMESPACE only when the AddOnDeploymentConfig sets agentInstallNamespace
// and renders an undefined variable as empty; here it is the default namespace otherwise, since
// an undefined variable is an error.
func templateVariables(in Input) variables {
	v := variables{values: map[string]string{}}
	if len(in.Template.Spec.Registration) > 0 {
		v.values[VarHubKubeconfig] = HubKubeconfigPath
		v.preset = append(v.preset, VarHubKubeconfig)
	}
	if in.Config != nil {
		for _, cv := range in.Config.Spec.CustomizedVariables {
			v.values[cv.Name] = cv.Value
		}
	}
	v.values[VarClusterName] = in.Cluster
	v.preset = append(v.preset, VarClusterName)
	v.values[VarInstallNamespace] = addonv1alpha1.DefaultAgentInstallNamespace
	if ns := configNamespace(in.Config); ns != "" {
		v.values[VarInstallNamespace] = ns
		v.preset = append(v.preset, VarInstallNamespace)
	}
	return v
}

func configNamespace(c *addonv1alpha1.AddOnDeploymentConfig) string {
	if c == nil {
		return ""
	}
	return c.Spec.AgentInstallNamespace
}

// substitute replaces each {{NAME}} of raw with its value, as OCM's template agent does (the
// name is everything between the braces, spaces included). It returns the names it does not know.
func substitute(raw string, values map[string]string) (string, []string) {
	var b strings.Builder
	var unknown []string
	for {
		i := strings.Index(raw, "{{")
		if i < 0 {
			break
		}
		j := strings.Index(raw[i+2:], "}}")
		if j < 0 {
			break
		}
		name := raw[i+2 : i+2+j]
		b.WriteString(raw[:i])
		if val, ok := values[name]; ok {
			b.WriteString(val)
		} else if !slices.Contains(unknown, name) {
			unknown = append(unknown, name)
		}
		raw = raw[i+2+j+2:]
	}
	b.WriteString(raw)
	return b.String(), unknown
}

// Render renders in's template into the agent's ManifestWork spec: variables substituted, each
// Deployment and DaemonSet decorated as OCM's template agent does (decorate), objects moved to
// the AddOnDeploymentConfig's agentInstallNamespace, and a WellKnownStatus feedback rule for
// each Deployment and DaemonSet (the health probe). A manifest using an undefined variable, or
// one that is not an object, is a *RenderError naming it.
func Render(in Input) (*Rendered, error) {
	vars := templateVariables(in)
	out := &Rendered{Template: in.Template.Name, Spec: *in.Template.Spec.AgentSpec.DeepCopy()}
	out.Spec.Workload.Manifests = nil
	var firstDeploy, firstDaemon string
	for i, m := range in.Template.Spec.AgentSpec.Workload.Manifests {
		field := fmt.Sprintf("spec.agentSpec.workload.manifests[%d]", i)
		text, unknown := substitute(string(m.Raw), vars.values)
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON([]byte(text)); err != nil {
			if len(unknown) > 0 {
				return nil, &RenderError{Field: field, Variables: unknown}
			}
			return nil, &RenderError{Field: field, Err: fmt.Errorf("not a Kubernetes object after substituting variables: %w", err)}
		}
		what := strings.TrimSpace(obj.GetKind() + " " + objectName(obj))
		if len(unknown) > 0 {
			return nil, &RenderError{Field: field, What: what, Variables: unknown}
		}
		obj, err := decorate(obj, in, vars)
		if err != nil {
			return nil, &RenderError{Field: field, What: what, Err: err}
		}
		raw, err := obj.MarshalJSON()
		if err != nil {
			return nil, &RenderError{Field: field, What: what, Err: err}
		}
		out.Spec.Workload.Manifests = append(out.Spec.Workload.Manifests, workv1.Manifest{})
		out.Spec.Workload.Manifests[len(out.Spec.Workload.Manifests)-1].Raw = bytes.TrimSpace(raw)
		if id, ok := workload(obj); ok {
			out.Workloads = append(out.Workloads, id)
			switch {
			case id.Resource == "deployments" && firstDeploy == "":
				firstDeploy = id.Namespace
			case id.Resource == "daemonsets" && firstDaemon == "":
				firstDaemon = id.Namespace
			}
		}
	}
	out.InstallNamespace = addonv1alpha1.DefaultAgentInstallNamespace
	switch {
	case configNamespace(in.Config) != "":
		out.InstallNamespace = configNamespace(in.Config)
	case firstDeploy != "":
		out.InstallNamespace = firstDeploy
	case firstDaemon != "":
		out.InstallNamespace = firstDaemon
	}
	out.Spec.ManifestConfigs = withProbes(out.Spec.ManifestConfigs, out.Workloads)
	return out, nil
}

func objectName(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

// workload says whether obj is a Deployment or DaemonSet, and its identifier in a ManifestWork.
func workload(obj *unstructured.Unstructured) (workv1.ResourceIdentifier, bool) {
	gvk := obj.GroupVersionKind()
	if gvk.Group != "apps" || (gvk.Kind != "Deployment" && gvk.Kind != "DaemonSet") {
		return workv1.ResourceIdentifier{}, false
	}
	return workv1.ResourceIdentifier{Group: "apps", Resource: strings.ToLower(gvk.Kind) + "s",
		Name: obj.GetName(), Namespace: obj.GetNamespace()}, true
}

// withProbes adds a WellKnownStatus feedback rule for each workload to configs (OCM's
// WorkloadAvailability health prober), keeping the template's own options.
func withProbes(configs []workv1.ManifestConfigOption, workloads []workv1.ResourceIdentifier) []workv1.ManifestConfigOption {
	for _, id := range workloads {
		i := slices.IndexFunc(configs, func(c workv1.ManifestConfigOption) bool { return c.ResourceIdentifier == id })
		if i < 0 {
			configs = append(configs, workv1.ManifestConfigOption{ResourceIdentifier: id})
			i = len(configs) - 1
		}
		if !slices.ContainsFunc(configs[i].FeedbackRules, func(r workv1.FeedbackRule) bool { return r.Type == workv1.WellKnownStatusType }) {
			configs[i].FeedbackRules = append(configs[i].FeedbackRules, workv1.FeedbackRule{Type: workv1.WellKnownStatusType})
		}
	}
	return configs
}
