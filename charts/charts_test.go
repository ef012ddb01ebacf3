package charts

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"

	"github.com/flotilla/flotilla/config/rbac"
)

var agentValues = map[string]any{"clusterName": "gpu-east", "bootstrapKubeconfig": "apiVersion: v1\nkind: Config\n"}

func TestLint(t *testing.T) {
	for name, vals := range map[string]map[string]any{Hub: nil, Agent: agentValues} {
		t.Run(name, func(t *testing.T) {
			ns := "open-cluster-management-hub"
			if name == Agent {
				ns = "open-cluster-management-agent"
			}
			l := lint.RunAll(name, vals, ns)
			for _, m := range l.Messages {
				if m.Severity >= support.WarningSev { // INFO (such as "icon is recommended") does not fail `helm lint`
					t.Errorf("helm lint %s: %s", name, m)
				}
			}
		})
	}
}

func renderChart(t *testing.T, name string, rel Release, vals map[string]any) *Rendered {
	t.Helper()
	ch, err := Load(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Render(ch, rel, vals)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func find[T any](t *testing.T, objs []*unstructured.Unstructured, kind, name string) *T {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			out := new(T)
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, out, true); err != nil {
				t.Fatalf("%s %s: %v", kind, name, err)
			}
			return out
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
	return nil
}

// The hub chart grants exactly the generated roles.
func TestHubRolesAreTheGeneratedOnes(t *testing.T) {
	r := renderChart(t, Hub, Release{Name: "flotilla", Namespace: "flotilla-system"}, nil)
	wantCR, err := rbac.ClusterRole()
	if err != nil {
		t.Fatal(err)
	}
	gotCR := find[rbacv1.ClusterRole](t, r.Objects, "ClusterRole", "flotilla-hub")
	if diff := cmp.Diff(wantCR.Rules, gotCR.Rules); diff != "" {
		t.Errorf("ClusterRole rules differ from config/rbac (-want +got):\n%s", diff)
	}
	wantLE, err := rbac.LeaderElectionRole("flotilla-system")
	if err != nil {
		t.Fatal(err)
	}
	gotLE := find[rbacv1.Role](t, r.Objects, "Role", "flotilla-hub")
	if diff := cmp.Diff(wantLE.Rules, gotLE.Rules); diff != "" {
		t.Errorf("leader election Role rules differ (-want +got):\n%s", diff)
	}
	if gotLE.Namespace != "flotilla-system" {
		t.Errorf("leader election Role in %q, want the release namespace", gotLE.Namespace)
	}
	// The one impersonation: OCM's add-on manager ServiceAccount, in the release namespace only.
	impersonate := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"serviceaccounts"},
		ResourceNames: []string{"addon-manager-controller-sa"}, Verbs: []string{"impersonate"}}
	bindAgentRole := rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"},
		ResourceNames: []string{rbac.ManagedServiceAccountAgentName}, Verbs: []string{"bind"}}
	for _, o := range r.Objects {
		if o.GetKind() == "ClusterRole" || o.GetKind() == "Role" {
			for _, rule := range find[rbacv1.ClusterRole](t, []*unstructured.Unstructured{withKind(o, "ClusterRole")}, "ClusterRole", o.GetName()).Rules {
				for _, v := range rule.Verbs {
					if v == "impersonate" && o.GetKind() == "Role" && o.GetName() == "flotilla-hub" && cmp.Equal(rule, impersonate) {
						continue
					}
					// And the one binding: the agents' role for their ManagedServiceAccounts' Secrets,
					// named, which the hub binds in cluster namespaces without holding its rules.
					if v == "bind" && o.GetKind() == "ClusterRole" && o.GetName() == "flotilla-hub" && cmp.Equal(rule, bindAgentRole) {
						continue
					}
					if v == "escalate" || v == "bind" || v == "*" || v == "impersonate" {
						t.Errorf("%s %s grants %q on %v", o.GetKind(), o.GetName(), v, rule.Resources)
					}
				}
			}
		}
	}
}

// The add-on manager identity: OCM's ServiceAccount in the release namespace, allowed to write
// RoleBindings and nothing it could bind to itself; off, the hub binds as itself.
func TestHubAddonManagerIdentity(t *testing.T) {
	on := renderChart(t, Hub, Release{Name: "flotilla", Namespace: "open-cluster-management-hub"}, nil)
	sa := find[corev1.ServiceAccount](t, on.Objects, "ServiceAccount", "addon-manager-controller-sa")
	if sa.Namespace != "open-cluster-management-hub" || ptr.Deref(sa.AutomountServiceAccountToken, true) {
		t.Errorf("ServiceAccount %s/%s automount %v, want the release namespace and no automount", sa.Namespace, sa.Name, sa.AutomountServiceAccountToken)
	}
	crb := find[rbacv1.ClusterRoleBinding](t, on.Objects, "ClusterRoleBinding", "flotilla-hub-addon-manager")
	wantSubjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "addon-manager-controller-sa", Namespace: "open-cluster-management-hub"}}
	if diff := cmp.Diff(wantSubjects, crb.Subjects); diff != "" || crb.RoleRef.Name != "flotilla-hub-addon-manager" {
		t.Errorf("ClusterRoleBinding role %s, subjects (-want +got):\n%s", crb.RoleRef.Name, diff)
	}
	cr := find[rbacv1.ClusterRole](t, on.Objects, "ClusterRole", "flotilla-hub-addon-manager")
	for _, rule := range cr.Rules {
		for _, res := range rule.Resources {
			if res != "rolebindings" && res != "managedclusteraddons/finalizers" {
				t.Errorf("ClusterRole flotilla-hub-addon-manager grants %v on %s: it needs only RoleBinding writes", rule.Verbs, res)
			}
		}
	}

	off := renderChart(t, Hub, Release{Name: "flotilla", Namespace: "open-cluster-management-hub"},
		map[string]any{"addonManagerIdentity": map[string]any{"enabled": false}})
	for _, o := range off.Objects {
		if o.GetName() == "addon-manager-controller-sa" || o.GetName() == "flotilla-hub-addon-manager" {
			t.Errorf("addonManagerIdentity.enabled=false still renders %s %s", o.GetKind(), o.GetName())
		}
	}
	args := find[appsv1.Deployment](t, off.Objects, "Deployment", "flotilla-hub").Spec.Template.Spec.Containers[0].Args
	if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--addon-manager-identity") }) {
		t.Errorf("addonManagerIdentity.enabled=false: args %v still name an identity", args)
	}
}

func withKind(o *unstructured.Unstructured, kind string) *unstructured.Unstructured {
	c := o.DeepCopy()
	c.SetKind(kind)
	return c
}

func TestHubDeployment(t *testing.T) {
	r := renderChart(t, Hub, Release{Name: "flotilla", Namespace: "ocm-hub"}, nil)
	d := find[appsv1.Deployment](t, r.Objects, "Deployment", "flotilla-hub")
	if got := ptr.Deref(d.Spec.Replicas, 0); got != 2 {
		t.Errorf("replicas = %d, want 2 by default", got)
	}
	c := d.Spec.Template.Spec.Containers[0]
	wantArgs := []string{
		"hub", "--leader-elect=true", "--leader-election-namespace=ocm-hub",
		"--health-probe-bind-address=:8081", "--metrics-bind-address=:8080",
		"--webhook-bind-address=:9443", "--webhook-service=ocm-hub/flotilla-hub-webhook:443",
		"--webhook-cert-dir=/var/run/flotilla/webhook-tls", "--explain-bind-address=:8444",
		"--cluster-cleanup-timeout=5m", "--dynamic-scoring-namespace=open-cluster-management-hub",
		"--kueue-namespace=kueue-system", "--kueue-dispatcher=false", "--kueue-credentials=clusterprofile", "--multikueue-fencing=true", "--v=0",
		"--flower-front-image=" + c.Image, "--addon-manager-identity=ocm-hub/addon-manager-controller-sa",
	}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	wantSC := &corev1.SecurityContext{
		ReadOnlyRootFilesystem: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	if diff := cmp.Diff(wantSC, c.SecurityContext); diff != "" {
		t.Errorf("container security context (-want +got):\n%s", diff)
	}
	psc := d.Spec.Template.Spec.SecurityContext
	if !ptr.Deref(psc.RunAsNonRoot, false) || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context = %+v, want runAsNonRoot and seccomp RuntimeDefault", psc)
	}
	if c.Resources.Limits.Memory().IsZero() || c.Resources.Requests.Cpu().IsZero() {
		t.Errorf("resources = %+v, want requests and a memory limit", c.Resources)
	}
	if c.Image != "ghcr.io/flotilla/flotilla:0.1.0" {
		t.Errorf("image = %q, want the chart's appVersion as tag", c.Image)
	}
	find[corev1.Secret](t, r.Objects, "Secret", "flotilla-hub-webhook-tls")
	find[corev1.Service](t, r.Objects, "Service", "flotilla-hub-webhook")
	if len(r.CRDs) < 15 {
		t.Errorf("%d CRDs in crds/, want every CRD of config/crd", len(r.CRDs))
	}
}

func TestWebhookCertificateNamesTheService(t *testing.T) {
	r := renderChart(t, Hub, Release{Name: "flotilla", Namespace: "ocm-hub"}, nil)
	s := find[corev1.Secret](t, r.Objects, "Secret", "flotilla-hub-webhook-tls")
	cert := parseCert(t, s.Data["tls.crt"])
	want := []string{"flotilla-hub-webhook.ocm-hub.svc", "flotilla-hub-webhook.ocm-hub.svc.cluster.local"}
	if diff := cmp.Diff(want, cert.DNSNames); diff != "" {
		t.Errorf("certificate DNS names (-want +got):\n%s", diff)
	}
	ca := parseCert(t, s.Data["ca.crt"])
	if err := cert.CheckSignatureFrom(ca); err != nil {
		t.Errorf("the serving certificate is not signed by ca.crt: %v", err)
	}
}

func TestBadValues(t *testing.T) {
	cases := map[string]struct {
		chart string
		ns    string
		vals  map[string]any
		want  []string
	}{
		"negative replicas":   {chart: Hub, vals: map[string]any{"replicas": -1}, want: []string{"replicas", "minimum"}},
		"unknown pull policy": {chart: Hub, vals: map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, want: []string{"pullPolicy", "Always"}},
		"webhook port clash":  {chart: Hub, vals: map[string]any{"ports": map[string]any{"webhook": 8080}}, want: []string{"ports.metrics and ports.webhook are both 8080", "different number"}},
		"port out of range":   {chart: Hub, vals: map[string]any{"ports": map[string]any{"explain": 70000}}, want: []string{"explain", "maximum"}},
		"bad cleanup timeout": {chart: Hub, vals: map[string]any{"clusterCleanupTimeout": "five minutes"}, want: []string{"clusterCleanupTimeout"}},
		"issuer without certManager": {chart: Hub, vals: map[string]any{"webhook": map[string]any{"certManager": map[string]any{"issuerRef": map[string]any{"name": "x"}}}},
			want: []string{"webhook.certManager.issuerRef", "enabled: true"}},
		"dashboard name not a DNS name": {chart: Hub, vals: map[string]any{"dashboard": map[string]any{"enabled": true, "dnsNames": []any{"https://fleet.example.com"}}},
			want: []string{"dnsNames"}},
		"restricted in the agent's namespace": {chart: Agent, vals: map[string]any{"clusterName": "gpu-east", "bootstrapKubeconfig": "x",
			"work": map[string]any{"mode": "Restricted", "restricted": map[string]any{"namespaces": []any{"open-cluster-management-agent"}}}},
			want: []string{"work.restricted.namespaces lists open-cluster-management-agent", "mount those Secrets"}},
		"restricted in an add-on's namespace": {chart: Agent, vals: map[string]any{"clusterName": "gpu-east", "bootstrapKubeconfig": "x",
			"addOnInstallNamespaces": []any{"vendor"}, "work": map[string]any{"mode": "Restricted", "restricted": map[string]any{"namespaces": []any{"vendor"}}}},
			want: []string{"work.restricted.namespaces lists vendor"}},
		"restricted namespaces in OCM mode": {chart: Agent, vals: map[string]any{"clusterName": "gpu-east", "bootstrapKubeconfig": "x",
			"work": map[string]any{"restricted": map[string]any{"namespaces": []any{"team-a"}}}},
			want: []string{"work.mode is OCM"}},
		"policy enforce in the agent's namespace": {chart: Agent, vals: map[string]any{"clusterName": "gpu-east", "bootstrapKubeconfig": "x",
			"policy": map[string]any{"enforce": map[string]any{"clusterRole": "edit", "namespaces": []any{"open-cluster-management-agent"}}}},
			want: []string{"policy.enforce.namespaces lists open-cluster-management-agent", "mount those Secrets"}},
		"policy enforce without a role": {chart: Agent, vals: map[string]any{"clusterName": "gpu-east", "bootstrapKubeconfig": "x",
			"policy": map[string]any{"enforce": map[string]any{"namespaces": []any{"team-a"}}}},
			want: []string{"policy.enforce.clusterRole is empty", "edit"}},
		"policy unknown field": {chart: Agent, vals: map[string]any{"clusterName": "gpu-east", "bootstrapKubeconfig": "x",
			"policy": map[string]any{"enforceClusterRole": "admin"}},
			want: []string{"enforceClusterRole"}},
		"unknown work mode": {chart: Agent, vals: map[string]any{"clusterName": "gpu-east", "bootstrapKubeconfig": "x", "work": map[string]any{"mode": "Strict"}},
			want: []string{"mode"}},
		"agent without cluster name": {chart: Agent, vals: map[string]any{"bootstrapKubeconfig": "x"}, want: []string{"clusterName is empty", "--set clusterName="}},
		"agent bad cluster name":     {chart: Agent, vals: map[string]any{"clusterName": "GPU_East", "bootstrapKubeconfig": "x"}, want: []string{"clusterName"}},
		"agent without kubeconfig":   {chart: Agent, vals: map[string]any{"clusterName": "gpu-east"}, want: []string{"bootstrapKubeconfig is empty", "flotilla init"}},
		"agent in another namespace": {chart: Agent, ns: "default", vals: agentValues, want: []string{"open-cluster-management-agent"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ch, err := Load(tc.chart)
			if err != nil {
				t.Fatal(err)
			}
			ns := tc.ns
			if ns == "" {
				ns = map[string]string{Hub: "open-cluster-management-hub", Agent: "open-cluster-management-agent"}[tc.chart]
			}
			_, err = Render(ch, Release{Name: "x", Namespace: ns}, tc.vals)
			if err == nil {
				t.Fatalf("rendered, want an error naming %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestAgentChart(t *testing.T) {
	r := renderChart(t, Agent, Release{Name: "agent", Namespace: "open-cluster-management-agent"}, agentValues)
	s := find[corev1.Secret](t, r.Objects, "Secret", "bootstrap-hub-kubeconfig")
	if got := string(s.Data["cluster-name"]); got != "gpu-east" {
		t.Errorf("bootstrap Secret cluster-name = %q", got)
	}
	d := find[appsv1.Deployment](t, r.Objects, "Deployment", "flotilla-agent")
	want := []string{"agent", "--cluster-name=gpu-east", "--agent-id=$(POD_NAME)", "--policy-executor=open-cluster-management-agent/flotilla-policy", "--v=0"}
	if diff := cmp.Diff(want, d.Spec.Template.Spec.Containers[0].Args); diff != "" {
		t.Errorf("agent args (-want +got):\n%s", diff)
	}
	crb := find[rbacv1.ClusterRoleBinding](t, r.Objects, "ClusterRoleBinding", "flotilla-agent-work-execution")
	if crb.RoleRef.Name != "admin" {
		t.Errorf("work execution bound to %q, want admin by default", crb.RoleRef.Name)
	}
	var crds []string
	for _, c := range r.CRDs {
		crds = append(crds, c.GetName())
	}
	if diff := cmp.Diff([]string{"clusterclaims.cluster.open-cluster-management.io", "configurationpolicies.policy.open-cluster-management.io",
		"appliedmanifestworks.work.open-cluster-management.io"}, crds); diff != "" {
		t.Errorf("agent CRDs (-want +got):\n%s", diff)
	}

	vals := maps.Clone(agentValues)
	vals["externalServerURLs"] = []any{"https://api.gpu-east.example.com:6443", "https://10.0.0.1:6443"}
	r = renderChart(t, Agent, Release{Name: "agent", Namespace: "open-cluster-management-agent"}, vals)
	d = find[appsv1.Deployment](t, r.Objects, "Deployment", "flotilla-agent")
	want = []string{"agent", "--cluster-name=gpu-east", "--agent-id=$(POD_NAME)",
		"--spoke-external-server-urls=https://api.gpu-east.example.com:6443,https://10.0.0.1:6443",
		"--policy-executor=open-cluster-management-agent/flotilla-policy", "--v=0"}
	if diff := cmp.Diff(want, d.Spec.Template.Spec.Containers[0].Args); diff != "" {
		t.Errorf("agent args with externalServerURLs (-want +got):\n%s", diff)
	}
}

// The governance add-ons act as flotilla-policy: it reads what policy.readClusterRole grants,
// cluster-wide, and enforce writes only with policy.enforce.clusterRole where policy.enforce says.
func TestAgentChartPolicyRights(t *testing.T) {
	type binding struct{ Kind, Namespace, Name, Role string }
	for name, tc := range map[string]struct {
		policy map[string]any
		want   []binding
	}{
		"default: read with view, enforce nothing": {want: []binding{{"ClusterRoleBinding", "", "flotilla-policy-read", "view"}}},
		"no reading either":                        {policy: map[string]any{"readClusterRole": ""}},
		"enforce in two namespaces": {policy: map[string]any{"enforce": map[string]any{"clusterRole": "edit", "namespaces": []any{"team-a", "team-b"}}},
			want: []binding{{"ClusterRoleBinding", "", "flotilla-policy-read", "view"},
				{"RoleBinding", "team-a", "flotilla-policy-enforce", "edit"}, {"RoleBinding", "team-b", "flotilla-policy-enforce", "edit"}}},
		"enforce cluster-wide": {policy: map[string]any{"readClusterRole": "cluster-reader", "enforce": map[string]any{"clusterRole": "admin", "clusterWide": true}},
			want: []binding{{"ClusterRoleBinding", "", "flotilla-policy-read", "cluster-reader"}, {"ClusterRoleBinding", "", "flotilla-policy-enforce", "admin"}}},
	} {
		t.Run(name, func(t *testing.T) {
			vals := maps.Clone(agentValues)
			if tc.policy != nil {
				vals["policy"] = tc.policy
			}
			r := renderChart(t, Agent, Release{Name: "agent", Namespace: "open-cluster-management-agent"}, vals)
			var got []binding
			for _, o := range r.Objects {
				if o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "RoleBinding" {
					continue
				}
				var b rbacv1.RoleBinding
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
					t.Fatal(err)
				}
				for _, s := range b.Subjects {
					if s.Name == "flotilla-policy" {
						got = append(got, binding{o.GetKind(), o.GetNamespace(), o.GetName(), b.RoleRef.Name})
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("flotilla-policy's bindings (-want +got):\n%s", diff)
			}
			sa := find[corev1.ServiceAccount](t, r.Objects, "ServiceAccount", "flotilla-policy")
			if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
				t.Errorf("flotilla-policy mounts a token: only the agent's impersonation may act as it")
			}
		})
	}
}

// A kept webhook certificate is reused only for the names it was made for; the rest of the
// behavior (lookup of the live Secret) is covered by test/install's upgrade test.
func TestWebhookCertificateRecordsItsNames(t *testing.T) {
	r := renderChart(t, Hub, Release{Name: "flotilla", Namespace: "ocm-hub"}, map[string]any{"webhook": map[string]any{"advertiseAddress": "127.0.0.1:9443"}})
	s := find[corev1.Secret](t, r.Objects, "Secret", "flotilla-hub-webhook-tls")
	want := "flotilla-hub-webhook.ocm-hub.svc,flotilla-hub-webhook.ocm-hub.svc.cluster.local,127.0.0.1"
	if got := s.Annotations["flotilla.io/webhook-names"]; got != want {
		t.Errorf("webhook-names annotation = %q, want %q", got, want)
	}
	cert := parseCert(t, s.Data["tls.crt"])
	if len(cert.IPAddresses) != 1 || cert.IPAddresses[0].String() != "127.0.0.1" {
		t.Errorf("certificate IP addresses = %v, want the advertised 127.0.0.1", cert.IPAddresses)
	}
}

func TestHubDashboard(t *testing.T) {
	for name, tc := range map[string]struct {
		vals          map[string]any
		args          []string
		containerPort int32
		servicePort   int32
	}{
		"off by default": {},
		"enabled": {vals: map[string]any{"dashboard": map[string]any{"enabled": true}}, args: []string{"--dashboard-bind-address=:8445",
			"--dashboard-cert-dir=/var/run/flotilla/dashboard-tls"}, containerPort: 8445, servicePort: 8445},
		"another port": {vals: map[string]any{"dashboard": map[string]any{"enabled": true}, "ports": map[string]any{"dashboard": 9000}},
			args: []string{"--dashboard-bind-address=:9000", "--dashboard-cert-dir=/var/run/flotilla/dashboard-tls"}, containerPort: 9000, servicePort: 8445},
	} {
		t.Run(name, func(t *testing.T) {
			r := renderChart(t, Hub, Release{Name: "flotilla", Namespace: "ocm-hub"}, tc.vals)
			c := find[appsv1.Deployment](t, r.Objects, "Deployment", "flotilla-hub").Spec.Template.Spec.Containers[0]
			var args []string
			for _, a := range c.Args {
				if strings.HasPrefix(a, "--dashboard-") {
					args = append(args, a)
				}
			}
			var containerPort, servicePort int32
			for _, p := range c.Ports {
				if p.Name == "dashboard" {
					containerPort = p.ContainerPort
				}
			}
			for _, p := range find[corev1.Service](t, r.Objects, "Service", "flotilla-hub").Spec.Ports {
				if p.Name == "dashboard" {
					servicePort = p.Port
				}
			}
			got := []any{args, containerPort, servicePort}
			if diff := cmp.Diff([]any{tc.args, tc.containerPort, tc.servicePort}, got); diff != "" {
				t.Errorf("dashboard's flags, container port and Service port (-want +got):\n%s", diff)
			}
		})
	}
}

// The dashboard the chart serves has a certificate for Service flotilla-hub's names, signed by an
// authority viewers can trust once, and every replica reads it and the shared session key from
// --dashboard-cert-dir; without them each replica would make a self-signed certificate for
// loopback names at start, and a session would open only on the replica that made it.
func TestHubDashboardCertificate(t *testing.T) {
	vals := map[string]any{"dashboard": map[string]any{"enabled": true, "dnsNames": []any{"fleet.example.com"}}}
	r := renderChart(t, Hub, Release{Name: "flotilla", Namespace: "ocm-hub"}, vals)
	s := find[corev1.Secret](t, r.Objects, "Secret", "flotilla-hub-dashboard-tls")
	cert := parseCert(t, s.Data["tls.crt"])
	want := []string{"flotilla-hub.ocm-hub.svc", "flotilla-hub.ocm-hub.svc.cluster.local", "fleet.example.com"}
	if diff := cmp.Diff(want, cert.DNSNames); diff != "" {
		t.Errorf("certificate DNS names (-want +got):\n%s", diff)
	}
	if err := cert.CheckSignatureFrom(parseCert(t, s.Data["ca.crt"])); err != nil {
		t.Errorf("the serving certificate is not signed by ca.crt: %v", err)
	}
	if days := cert.NotAfter.Sub(cert.NotBefore).Hours() / 24; days > 825 {
		t.Errorf("the certificate is valid %.0f days, more than the 825 browsers on Apple's platforms accept", days)
	}
	if got := s.Annotations["flotilla.io/dashboard-names"]; got != strings.Join(want, ",") {
		t.Errorf("dashboard-names annotation = %q, want %q", got, strings.Join(want, ","))
	}
	key := find[corev1.Secret](t, r.Objects, "Secret", "flotilla-hub-dashboard-session")
	if n := len(key.Data["session.key"]); n < 32 {
		t.Errorf("session.key has %d bytes, want at least 32", n)
	}
	d := find[appsv1.Deployment](t, r.Objects, "Deployment", "flotilla-hub")
	var mounted *corev1.Volume
	for i, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "dashboard-tls" {
			mounted = &d.Spec.Template.Spec.Volumes[i]
		}
	}
	if mounted == nil || mounted.Projected == nil {
		t.Fatalf("no projected volume dashboard-tls in %+v", d.Spec.Template.Spec.Volumes)
	}
	var files []string
	for _, src := range mounted.Projected.Sources {
		for _, it := range src.Secret.Items {
			files = append(files, src.Secret.Name+"/"+it.Key+"->"+it.Path)
		}
	}
	wantFiles := []string{"flotilla-hub-dashboard-tls/tls.crt->tls.crt", "flotilla-hub-dashboard-tls/tls.key->tls.key",
		"flotilla-hub-dashboard-tls/ca.crt->ca.crt", "flotilla-hub-dashboard-session/session.key->session.key"}
	if diff := cmp.Diff(wantFiles, files); diff != "" {
		t.Errorf("files of --dashboard-cert-dir (-want +got):\n%s", diff)
	}
	if _, ok := d.Spec.Template.Annotations["checksum/dashboard-tls"]; !ok {
		t.Errorf("no checksum/dashboard-tls annotation: a new certificate would not restart the replicas")
	}

	// With cert-manager the same names go in a Certificate, which cert-manager renews.
	vals["webhook"] = map[string]any{"certManager": map[string]any{"enabled": true}}
	r = renderChart(t, Hub, Release{Name: "flotilla", Namespace: "ocm-hub"}, vals)
	var found bool
	for _, o := range r.Objects {
		if o.GetKind() == "Certificate" && o.GetName() == "flotilla-hub-dashboard-tls" {
			found = true
			names, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "dnsNames")
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("cert-manager Certificate dnsNames (-want +got):\n%s", diff)
			}
		}
	}
	if !found {
		t.Errorf("no cert-manager Certificate flotilla-hub-dashboard-tls with webhook.certManager.enabled")
	}
}

// agentRules is what the rendered agent chart grants ServiceAccount sa: its ClusterRoles' rules
// cluster-wide (by ClusterRoleBindings), and per namespace its Roles' and the ClusterRoles bound
// there by RoleBindings.
func agentGrants(t *testing.T, r *Rendered, sa string) (cluster []rbacv1.PolicyRule, byNamespace map[string][]rbacv1.PolicyRule) {
	t.Helper()
	clusterRoles, roles := map[string][]rbacv1.PolicyRule{}, map[string][]rbacv1.PolicyRule{}
	for _, o := range r.Objects {
		switch o.GetKind() {
		case "ClusterRole":
			clusterRoles[o.GetName()] = find[rbacv1.ClusterRole](t, r.Objects, "ClusterRole", o.GetName()).Rules
		case "Role":
			var role rbacv1.Role
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
				t.Fatal(err)
			}
			roles[o.GetNamespace()+"/"+o.GetName()] = role.Rules
		}
	}
	byNamespace = map[string][]rbacv1.PolicyRule{}
	bound := func(subjects []rbacv1.Subject) bool {
		return slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool { return s.Kind == "ServiceAccount" && s.Name == sa })
	}
	for _, o := range r.Objects {
		switch o.GetKind() {
		case "ClusterRoleBinding":
			b := find[rbacv1.ClusterRoleBinding](t, r.Objects, "ClusterRoleBinding", o.GetName())
			if bound(b.Subjects) {
				rules, ok := clusterRoles[b.RoleRef.Name]
				if !ok {
					rules = []rbacv1.PolicyRule{{Verbs: []string{"role " + b.RoleRef.Name + " (not the chart's)"}}}
				}
				cluster = append(cluster, rules...)
			}
		case "RoleBinding":
			var b rbacv1.RoleBinding
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
				t.Fatal(err)
			}
			if !bound(b.Subjects) {
				continue
			}
			rules := roles[o.GetNamespace()+"/"+b.RoleRef.Name]
			if b.RoleRef.Kind == "ClusterRole" {
				rules = clusterRoles[b.RoleRef.Name]
			}
			byNamespace[o.GetNamespace()] = append(byNamespace[o.GetNamespace()], rules...)
		}
	}
	return cluster, byNamespace
}

// grants says whether rules allow verb on resource in group.
func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if (slices.Contains(r.APIGroups, group) || slices.Contains(r.APIGroups, "*")) &&
			(slices.Contains(r.Resources, resource) || slices.Contains(r.Resources, "*")) &&
			(slices.Contains(r.Verbs, verb) || slices.Contains(r.Verbs, "*")) {
			return true
		}
	}
	return false
}

// TestAgentSecretsOnlyWhereItKeepsCredentials: in either mode the agent's own rules read no Secret
// cluster-wide; it reads and writes them in its namespace, the add-on namespace and the add-on
// install namespaces the values list.
func TestAgentSecretsOnlyWhereItKeepsCredentials(t *testing.T) {
	for _, mode := range []string{"OCM", "Restricted"} {
		t.Run(mode, func(t *testing.T) {
			vals := map[string]any{"clusterName": "gpu-east", "bootstrapKubeconfig": "x", "addOnInstallNamespaces": []any{"vendor-addons"},
				"work": map[string]any{"mode": mode}}
			r := renderChart(t, Agent, Release{Name: "agent", Namespace: "open-cluster-management-agent"}, vals)
			cluster, byNS := agentGrants(t, r, "flotilla-agent")
			own := find[rbacv1.ClusterRole](t, r.Objects, "ClusterRole", "flotilla-agent").Rules
			if grants(own, "", "secrets", "get") || grants(own, "", "secrets", "list") {
				t.Errorf("the agent's ClusterRole reads Secrets cluster-wide")
			}
			if mode == "Restricted" && grants(cluster, "", "secrets", "get") {
				t.Errorf("in the Restricted mode the agent reads Secrets cluster-wide through a binding")
			}
			var where []string
			for ns, rules := range byNS {
				if grants(rules, "", "secrets", "get") && grants(rules, "", "secrets", "create") {
					where = append(where, ns)
				}
			}
			slices.Sort(where)
			want := []string{"open-cluster-management-agent", "open-cluster-management-agent-addon", "vendor-addons"}
			if diff := cmp.Diff(want, where); diff != "" {
				t.Errorf("namespaces where the agent keeps Secrets (-want +got):\n%s", diff)
			}
			find[corev1.Namespace](t, r.Objects, "Namespace", "open-cluster-management-agent-addon")
		})
	}
}

// TestAgentWorkModes: OCM's mode binds the execution role to the agent, as OCM does; the
// Restricted mode applies works as flotilla-work, which may do nothing with Secrets, ClusterClaims,
// impersonation or RBAC, and only in the namespaces listed, and binds the agent nothing more.
func TestAgentWorkModes(t *testing.T) {
	base := func(work map[string]any) map[string]any {
		return map[string]any{"clusterName": "gpu-east", "bootstrapKubeconfig": "x", "work": work}
	}
	t.Run("OCM", func(t *testing.T) {
		r := renderChart(t, Agent, Release{Name: "agent", Namespace: "open-cluster-management-agent"}, base(map[string]any{}))
		crb := find[rbacv1.ClusterRoleBinding](t, r.Objects, "ClusterRoleBinding", "flotilla-agent-work-execution")
		if crb.RoleRef.Name != "admin" || crb.Subjects[0].Name != "flotilla-agent" {
			t.Errorf("work execution binding %+v, want admin bound to the agent", crb)
		}
		args := find[appsv1.Deployment](t, r.Objects, "Deployment", "flotilla-agent").Spec.Template.Spec.Containers[0].Args
		if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--work-executor") }) {
			t.Errorf("OCM mode runs the agent with %v, want no --work-executor", args)
		}
	})
	t.Run("Restricted", func(t *testing.T) {
		r := renderChart(t, Agent, Release{Name: "agent", Namespace: "open-cluster-management-agent"},
			base(map[string]any{"mode": "Restricted", "restricted": map[string]any{"namespaces": []any{"team-a", "team-b"}}}))
		for _, o := range r.Objects {
			if o.GetKind() == "ClusterRoleBinding" && o.GetName() == "flotilla-agent-work-execution" {
				t.Errorf("the Restricted mode binds %s to the agent", o.GetName())
			}
		}
		args := find[appsv1.Deployment](t, r.Objects, "Deployment", "flotilla-agent").Spec.Template.Spec.Containers[0].Args
		if !slices.Contains(args, "--work-executor=open-cluster-management-agent/flotilla-work") {
			t.Errorf("the agent runs with %v, want --work-executor=open-cluster-management-agent/flotilla-work", args)
		}
		find[corev1.ServiceAccount](t, r.Objects, "ServiceAccount", "flotilla-work")
		cluster, byNS := agentGrants(t, r, "flotilla-work")
		if len(cluster) > 0 {
			t.Errorf("flotilla-work holds cluster-wide rules %+v, want none", cluster)
		}
		var nss []string
		for ns, rules := range byNS {
			nss = append(nss, ns)
			for _, no := range []struct{ group, resource, verb string }{
				{"", "secrets", "get"}, {"", "secrets", "list"}, {"", "secrets", "create"},
				{"cluster.open-cluster-management.io", "clusterclaims", "create"},
				{"", "serviceaccounts", "impersonate"}, {"", "users", "impersonate"},
				{"rbac.authorization.k8s.io", "roles", "create"}, {"rbac.authorization.k8s.io", "rolebindings", "create"},
				{"", "serviceaccounts/token", "create"},
			} {
				if grants(rules, no.group, no.resource, no.verb) {
					t.Errorf("flotilla-work may %s %s.%s in %s", no.verb, no.resource, no.group, ns)
				}
			}
			if !grants(rules, "apps", "deployments", "create") {
				t.Errorf("flotilla-work may not create Deployments in %s", ns)
			}
		}
		slices.Sort(nss)
		if diff := cmp.Diff([]string{"team-a", "team-b"}, nss); diff != "" {
			t.Errorf("namespaces where works apply (-want +got):\n%s", diff)
		}
	})
}

// TestHubKueueSecrets: the hub gets Secrets in Kueue's namespace only with the dispatcher on and
// the Secret path chosen; on the ClusterProfile path (the default) it holds no Secret at all.
func TestHubKueueSecrets(t *testing.T) {
	cases := map[string]struct {
		kueue    map[string]any
		wantRole bool
		wantArg  string
	}{
		"default":                         {kueue: nil, wantArg: "--kueue-credentials=clusterprofile"},
		"dispatcher, ClusterProfile path": {kueue: map[string]any{"dispatcher": true}, wantArg: "--kueue-credentials=clusterprofile"},
		"dispatcher, Secret path":         {kueue: map[string]any{"dispatcher": true, "credentials": "secret"}, wantRole: true, wantArg: "--kueue-credentials=secret"},
		"Secret path, no dispatcher":      {kueue: map[string]any{"credentials": "secret"}, wantArg: "--kueue-credentials=secret"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var vals map[string]any
			if tc.kueue != nil {
				vals = map[string]any{"kueue": tc.kueue}
			}
			r := renderChart(t, Hub, Release{Name: "flotilla", Namespace: "open-cluster-management-hub"}, vals)
			gotRole := slices.ContainsFunc(r.Objects, func(o *unstructured.Unstructured) bool {
				return o.GetKind() == "Role" && o.GetName() == "flotilla-hub-kueue-secrets"
			})
			if gotRole != tc.wantRole {
				t.Errorf("Role flotilla-hub-kueue-secrets rendered %v, want %v", gotRole, tc.wantRole)
			}
			args := find[appsv1.Deployment](t, r.Objects, "Deployment", "flotilla-hub").Spec.Template.Spec.Containers[0].Args
			if !slices.Contains(args, tc.wantArg) {
				t.Errorf("args %v lack %s", args, tc.wantArg)
			}
		})
	}
	ch, err := Load(Hub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(ch, Release{Name: "flotilla", Namespace: "x"}, map[string]any{"kueue": map[string]any{"credentials": "kubeconfig"}}); err == nil {
		t.Error("kueue.credentials kubeconfig rendered; want the schema's refusal")
	}
}
