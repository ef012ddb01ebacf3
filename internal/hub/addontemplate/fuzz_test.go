package addontemplate

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
)

// FuzzRender renders arbitrary template manifests with arbitrary customized variables and
// install namespaces, as an AddOnTemplate's and AddOnDeploymentConfig's authors may write them.
// It must never panic; a render either fails with a *RenderError or gives manifests that are
// each a JSON object.
func FuzzRender(f *testing.F) {
	f.Add(agentDeployment, "LOG_LEVEL", "2", "", "quay.io", "mirror.local")
	f.Add(agentDeployment, "LOG_LEVEL", `2","injected":"x`, "other-ns", "", "")
	f.Add(`{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"{{IMG}}"}]}}}}`,
		"IMG", "a:b", "ns", "a", "b")
	f.Add(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"{{CLUSTER_NAME}}"}}`, "CLUSTER_NAME", "other", "", "", "")
	f.Add(`{{`, "", "", "", "", "")
	f.Add(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"template":{"spec":{"containers":"no"}}}}`, "A", "B", "", "", "")
	f.Add(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"template":7}}`, "A", "B", "n", "", "")
	f.Fuzz(func(t *testing.T, manifest, name, value, installNamespace, source, mirror string) {
		cfg := config(func(s *addonv1alpha1.AddOnDeploymentConfigSpec) {
			s.CustomizedVariables = append(s.CustomizedVariables, addonv1alpha1.CustomizedVariable{Name: name, Value: value})
			s.AgentInstallNamespace = installNamespace
			s.Registries = []addonv1alpha1.ImageMirror{{Source: source, Mirror: mirror}}
			s.NodePlacement = &addonv1alpha1.NodePlacement{Tolerations: []corev1.Toleration{{Key: value, Operator: corev1.TolerationOpExists}}}
		})
		for _, reg := range [][]addonv1alpha1.RegistrationSpec{nil, kubeClient} {
			out, err := Render(Input{Cluster: "spoke-1", Addon: "gpu", Template: templateOf(reg, manifest), Config: cfg})
			if err != nil {
				if _, ok := err.(*RenderError); !ok {
					t.Fatalf("Render failed with %T, not a *RenderError: %v", err, err)
				}
				if err.Error() == "" {
					t.Fatal("Render failed with an empty message")
				}
				continue
			}
			for i, m := range out.Spec.Workload.Manifests {
				var obj map[string]any
				if err := json.Unmarshal(m.Raw, &obj); err != nil {
					t.Fatalf("rendered manifest %d is not a JSON object: %v\n%s", i, err, m.Raw)
				}
			}
			if out.InstallNamespace == "" {
				t.Fatal("Render gave no install namespace")
			}
		}
	})
}
