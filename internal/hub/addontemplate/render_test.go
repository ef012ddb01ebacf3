package addontemplate

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// templateOf is a template whose manifests are the given JSON texts.
func templateOf(reg []addonv1alpha1.RegistrationSpec, manifests ...string) *addonv1alpha1.AddOnTemplate {
	t := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: "gpu-tmpl"},
		Spec: addonv1alpha1.AddOnTemplateSpec{AddonName: "gpu", Registration: reg}}
	for _, m := range manifests {
		t.Spec.AgentSpec.Workload.Manifests = append(t.Spec.AgentSpec.Workload.Manifests, workv1.Manifest{})
		t.Spec.AgentSpec.Workload.Manifests[len(t.Spec.AgentSpec.Workload.Manifests)-1].Raw = []byte(m)
	}
	return t
}

const agentDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"gpu-agent","namespace":"open-cluster-management-agent-addon"},
"spec":{"selector":{"matchLabels":{"app":"gpu"}},"template":{"metadata":{"labels":{"app":"gpu"}},"spec":{
"tolerations":[{"key":"old","operator":"Exists"}],
"containers":[{"name":"agent","image":"quay.io/flotilla/gpu:v1","args":["--cluster={{CLUSTER_NAME}}","--hub={{HUB_KUBECONFIG}}","--ns={{INSTALL_NAMESPACE}}","--level={{LOG_LEVEL}}"]}]}}}}`

// deployment is the agent Deployment as rendered, changed by edit.
func deployment(edit func(d *appsv1.Deployment)) *appsv1.Deployment {
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-agent", Namespace: "open-cluster-management-agent-addon"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "gpu"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "gpu"}},
				Spec: corev1.PodSpec{
					Tolerations: []corev1.Toleration{{Key: "old", Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{Name: "agent", Image: "quay.io/flotilla/gpu:v1",
						Args:         []string{"--cluster=spoke-1", "--hub=/managed/hub-kubeconfig/kubeconfig", "--ns=open-cluster-management-agent-addon", "--level=2"},
						Env:          []corev1.EnvVar{{Name: "HUB_KUBECONFIG", Value: "/managed/hub-kubeconfig/kubeconfig"}, {Name: "CLUSTER_NAME", Value: "spoke-1"}},
						VolumeMounts: []corev1.VolumeMount{{Name: "hub-kubeconfig", MountPath: "/managed/hub-kubeconfig"}},
					}},
					Volumes: []corev1.Volume{{Name: "hub-kubeconfig", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "gpu-hub-kubeconfig"}}}},
				},
			},
		},
	}
	if edit != nil {
		edit(d)
	}
	return d
}

func config(edit func(s *addonv1alpha1.AddOnDeploymentConfigSpec)) *addonv1alpha1.AddOnDeploymentConfig {
	c := &addonv1alpha1.AddOnDeploymentConfig{Spec: addonv1alpha1.AddOnDeploymentConfigSpec{
		CustomizedVariables: []addonv1alpha1.CustomizedVariable{{Name: "LOG_LEVEL", Value: "2"}}}}
	if edit != nil {
		edit(&c.Spec)
	}
	return c
}

var kubeClient = []addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeKubeClient}}

func TestRender(t *testing.T) {
	cases := map[string]struct {
		template      *addonv1alpha1.AddOnTemplate
		config        *addonv1alpha1.AddOnDeploymentConfig
		want          *appsv1.Deployment
		wantNamespace string
		wantErr       *RenderError
	}{
		"built-in and customized variables": {
			template:      templateOf(kubeClient, agentDeployment),
			config:        config(nil),
			want:          deployment(nil),
			wantNamespace: "open-cluster-management-agent-addon",
		},
		"customized variables override HUB_KUBECONFIG but not CLUSTER_NAME": {
			template: templateOf(kubeClient, agentDeployment),
			config: config(func(s *addonv1alpha1.AddOnDeploymentConfigSpec) {
				s.CustomizedVariables = append(s.CustomizedVariables,
					addonv1alpha1.CustomizedVariable{Name: "HUB_KUBECONFIG", Value: "/etc/hub"},
					addonv1alpha1.CustomizedVariable{Name: "CLUSTER_NAME", Value: "other"})
			}),
			want: deployment(func(d *appsv1.Deployment) {
				c := &d.Spec.Template.Spec.Containers[0]
				c.Args[1] = "--hub=/etc/hub"
				c.Env[0].Value = "/etc/hub"
			}),
			wantNamespace: "open-cluster-management-agent-addon",
		},
		"undefined variable": {
			template: templateOf(kubeClient, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns"}}`, agentDeployment),
			wantErr: &RenderError{Field: "spec.agentSpec.workload.manifests[1]", What: "Deployment open-cluster-management-agent-addon/gpu-agent",
				Variables: []string{"LOG_LEVEL"}},
		},
		"HUB_KUBECONFIG is undefined without a registration": {
			template: templateOf(nil, agentDeployment),
			config:   config(nil),
			wantErr: &RenderError{Field: "spec.agentSpec.workload.manifests[0]", What: "Deployment open-cluster-management-agent-addon/gpu-agent",
				Variables: []string{"HUB_KUBECONFIG"}},
		},
		"nodePlacement and registries": {
			template: templateOf(kubeClient, agentDeployment),
			config: config(func(s *addonv1alpha1.AddOnDeploymentConfigSpec) {
				s.NodePlacement = &addonv1alpha1.NodePlacement{NodeSelector: map[string]string{"role": "infra"},
					Tolerations: []corev1.Toleration{{Key: "infra", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}
				s.Registries = []addonv1alpha1.ImageMirror{{Source: "quay.io/flotilla", Mirror: "mirror.example.com/f"}}
			}),
			want: deployment(func(d *appsv1.Deployment) {
				p := &d.Spec.Template.Spec
				p.NodeSelector = map[string]string{"role": "infra"}
				p.Tolerations = []corev1.Toleration{{Key: "infra", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
				p.Containers[0].Image = "mirror.example.com/f/gpu:v1"
			}),
			wantNamespace: "open-cluster-management-agent-addon",
		},
		"agentInstallNamespace": {
			template: templateOf(kubeClient, agentDeployment),
			config:   config(func(s *addonv1alpha1.AddOnDeploymentConfigSpec) { s.AgentInstallNamespace = "gpu-system" }),
			want: deployment(func(d *appsv1.Deployment) {
				d.Namespace = "gpu-system"
				c := &d.Spec.Template.Spec.Containers[0]
				c.Args[2] = "--ns=gpu-system"
				c.Env = append(c.Env, corev1.EnvVar{Name: "INSTALL_NAMESPACE", Value: "gpu-system"})
			}),
			wantNamespace: "gpu-system",
		},
		"custom signer volume": {
			template: templateOf([]addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeCustomSigner,
				CustomSigner: &addonv1alpha1.CustomSignerRegistrationConfig{SignerName: "example.com/gpu-metrics"}}}, agentDeployment),
			config: config(nil),
			want: deployment(func(d *appsv1.Deployment) {
				p := &d.Spec.Template.Spec
				p.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "cert-example-com-gpu-metrics", MountPath: "/managed/example.com-gpu-metrics"}}
				p.Volumes = []corev1.Volume{{Name: "cert-example-com-gpu-metrics",
					VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "gpu-example.com-gpu-metrics-client-cert"}}}}
			}),
			wantNamespace: "open-cluster-management-agent-addon",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Render(Input{Cluster: "spoke-1", Addon: "gpu", Template: tc.template, Config: tc.config})
			if tc.wantErr != nil {
				var re *RenderError
				if !errors.As(err, &re) {
					t.Fatalf("Render: got error %v, want a RenderError", err)
				}
				if diff := cmp.Diff(tc.wantErr, re); diff != "" {
					t.Errorf("RenderError (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var d appsv1.Deployment
			if err := json.Unmarshal(got.Spec.Workload.Manifests[0].Raw, &d); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, &d); diff != "" {
				t.Errorf("rendered Deployment (-want +got):\n%s", diff)
			}
			if got.InstallNamespace != tc.wantNamespace {
				t.Errorf("install namespace: want %q, got %q", tc.wantNamespace, got.InstallNamespace)
			}
			wantProbe := []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Name: "gpu-agent", Namespace: tc.wantNamespace},
				FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
			}}
			if diff := cmp.Diff(wantProbe, got.Spec.ManifestConfigs); diff != "" {
				t.Errorf("manifestConfigs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderErrorMessage(t *testing.T) {
	_, err := Render(Input{Cluster: "spoke-1", Addon: "gpu", Template: templateOf(kubeClient, agentDeployment)})
	want := "spec.agentSpec.workload.manifests[0] (Deployment open-cluster-management-agent-addon/gpu-agent) uses undefined variable {{LOG_LEVEL}}: " +
		"define it in the AddOnDeploymentConfig's spec.customizedVariables, or use a built-in one (CLUSTER_NAME, HUB_KUBECONFIG, INSTALL_NAMESPACE)"
	if err == nil || err.Error() != want {
		t.Errorf("error:\nwant %s\ngot  %v", want, err)
	}
}

func TestMoveToNamespace(t *testing.T) {
	tmpl := templateOf(nil,
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"open-cluster-management-agent-addon"}}`,
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"gpu"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"gpu"},
		  "subjects":[{"kind":"ServiceAccount","name":"gpu","namespace":"open-cluster-management-agent-addon"},{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"g"}]}`,
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"gpu"}}`)
	got, err := Render(Input{Cluster: "spoke-1", Addon: "gpu", Template: tmpl,
		Config: config(func(s *addonv1alpha1.AddOnDeploymentConfigSpec) { s.AgentInstallNamespace = "gpu-system" })})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range got.Spec.Workload.Manifests {
		texts = append(texts, string(m.Raw))
	}
	want := []string{
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"gpu-system"}}`,
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"gpu"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"gpu"},` +
			`"subjects":[{"kind":"ServiceAccount","name":"gpu","namespace":"gpu-system"},{"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":"g"}]}`,
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"gpu"}}`,
	}
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Errorf("manifests (-want +got):\n%s", diff)
	}
}

func TestOverrideImage(t *testing.T) {
	cases := map[string]struct {
		registries []addonv1alpha1.ImageMirror
		image      string
		want       string
	}{
		"no registries":        {image: "quay.io/a/b:v1", want: "quay.io/a/b:v1"},
		"source prefix":        {registries: []addonv1alpha1.ImageMirror{{Source: "quay.io/a", Mirror: "m.io/x"}}, image: "quay.io/a/b:v1", want: "m.io/x/b:v1"},
		"other source":         {registries: []addonv1alpha1.ImageMirror{{Source: "docker.io", Mirror: "m.io"}}, image: "quay.io/a/b:v1", want: "quay.io/a/b:v1"},
		"no source: last path": {registries: []addonv1alpha1.ImageMirror{{Mirror: "m.io/all/"}}, image: "quay.io/a/b:v1", want: "m.io/all/b:v1"},
		"last match wins": {registries: []addonv1alpha1.ImageMirror{{Source: "quay.io", Mirror: "one.io"}, {Source: "quay.io/a", Mirror: "two.io"}},
			image: "quay.io/a/b:v1", want: "two.io/b:v1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, OverrideImage(tc.registries, tc.image)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
