//go:build integration

package addontemplate

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/hub/addontemplate"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const (
	wait       = 90 * time.Second
	agentNS    = "open-cluster-management-agent-addon"
	configNS   = "addon-configs"
	addonGroup = "addon.open-cluster-management.io"
)

// agentManifests are a template agent's manifests: its namespace and a Deployment using the
// variables CLUSTER_NAME, INSTALL_NAMESPACE and TAG (a customized variable), plus extra
// arguments (which may use undefined variables).
func agentManifests(t *testing.T, addon string, extraArgs ...string) []workv1.Manifest {
	t.Helper()
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: agentNS}}
	labels := map[string]string{"app": addon}
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: addon + "-agent", Namespace: agentNS},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "agent", Image: "quay.io/flotilla/" + addon + ":{{TAG}}",
					Args: append([]string{"--cluster={{CLUSTER_NAME}}", "--namespace={{INSTALL_NAMESPACE}}"}, extraArgs...),
				}}},
			},
		},
	}
	var out []workv1.Manifest
	for _, o := range []any{ns, d} {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: b}})
	}
	return out
}

// templateAddOn makes an AddOnTemplate and a ClusterManagementAddOn (Manual) whose default
// configurations are the template and the AddOnDeploymentConfig "defaults".
func templateAddOn(t *testing.T, c client.Client, addon string, reg []addonv1alpha1.RegistrationSpec, extraArgs ...string) {
	t.Helper()
	testenv.Create(t, c, &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: addon + "-v1"},
		Spec: addonv1alpha1.AddOnTemplateSpec{AddonName: addon, Registration: reg,
			AgentSpec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: agentManifests(t, addon, extraArgs...)}}}})
	testenv.Create(t, c, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: addon},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{
			InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyManual},
			SupportedConfigs: []addonv1alpha1.ConfigMeta{
				{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonGroup, Resource: "addontemplates"},
					DefaultConfig: &addonv1alpha1.ConfigReferent{Name: addon + "-v1"}},
				{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonGroup, Resource: "addondeploymentconfigs"},
					DefaultConfig: &addonv1alpha1.ConfigReferent{Namespace: configNS, Name: "defaults"}},
			},
		}})
}

// enable makes the add-on's ManagedClusterAddOn in the cluster's namespace; it is deleted when the test ends.
func enable(t *testing.T, c client.Client, addon, cluster string) *addonv1alpha1.ManagedClusterAddOn {
	t.Helper()
	m := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: addon}}
	testenv.Create(t, c, m)
	return m
}

func kubeClient(perms ...addonv1alpha1.HubPermissionConfig) []addonv1alpha1.RegistrationSpec {
	return []addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeKubeClient,
		KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{HubPermissions: perms}}}
}

func currentCluster(role string) addonv1alpha1.HubPermissionConfig {
	return addonv1alpha1.HubPermissionConfig{Type: addonv1alpha1.HubPermissionsBindingCurrentCluster,
		CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: role}}
}

// conditionState is "Status/Reason: message" of the add-on's condition, or "none".
func conditionState(m *addonv1alpha1.ManagedClusterAddOn, typ string) string {
	c := meta.FindStatusCondition(m.Status.Conditions, typ)
	if c == nil {
		return "none"
	}
	return string(c.Status) + "/" + c.Reason + ": " + c.Message
}

func describe(m *addonv1alpha1.ManagedClusterAddOn) string {
	var parts []string
	for _, c := range m.Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s/%s (%s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(parts, "; ")
}

// waitAddOn waits until cond holds for the add-on in the cluster and returns it.
func waitAddOn(t *testing.T, c client.Client, cluster, addon, what string, cond func(*addonv1alpha1.ManagedClusterAddOn) bool) *addonv1alpha1.ManagedClusterAddOn {
	t.Helper()
	m := &addonv1alpha1.ManagedClusterAddOn{}
	testenv.WaitFor(t, wait, fmt.Sprintf("add-on %s/%s: %s", cluster, addon, what), func(ctx context.Context) (bool, string, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: addon}, m); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		return cond(m), describe(m), nil
	})
	return m
}

func isTrue(typ string) func(*addonv1alpha1.ManagedClusterAddOn) bool {
	return func(m *addonv1alpha1.ManagedClusterAddOn) bool {
		return meta.IsStatusConditionTrue(m.Status.Conditions, typ)
	}
}

func availableAndApplied(m *addonv1alpha1.ManagedClusterAddOn) bool {
	return isTrue(addonv1alpha1.ManagedClusterAddOnManifestApplied)(m) && isTrue(addonv1alpha1.ManagedClusterAddOnConditionAvailable)(m)
}

// waitGone waits until get finds nothing.
func waitGone(t *testing.T, what string, get func(ctx context.Context) error) {
	t.Helper()
	// Deleting on the spoke waits for the garbage collector there (foreground propagation).
	testenv.WaitFor(t, 2*wait, what+" to be deleted", func(ctx context.Context) (bool, string, error) {
		err := get(ctx)
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, "still there", err
	})
}

// TestTemplateAddOn deploys template add-ons to two spokes with real registration and work
// agents: the agent's Deployment reaches the spoke through the add-on's ManifestWork, the add-on
// becomes ManifestApplied and Available once the Deployment is (kwok runs its pod), its hub
// permissions are bound; bad templates end in conditions naming the field while the other
// add-ons keep working; a ManifestWork the hub did not make is left alone; deleting the add-on
// removes its work, its binding and its Deployment. Last, over all three spokes, the install
// strategy Placements with a Progressive rollout (testPlacementsRollout).
func TestTemplateAddOn(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 3, CRDs: true})
	all := joinAll(t, env)
	clusters := all[:2] // the third joins the placement rollout at the end
	for _, j := range all {
		env.AddNodes(t, j.Spoke, localk8s.NodePool{Name: "addon", Count: 1, CPU: resource.MustParse("4"), Memory: resource.MustParse("8Gi")})
	}
	hub := env.HubClient(t)
	ctx := context.Background()
	spoke1, spoke2 := clusters[0], clusters[1]

	testenv.Create(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: configNS}})
	testenv.Create(t, hub, &addonv1alpha1.AddOnDeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: configNS, Name: "defaults"},
		Spec: addonv1alpha1.AddOnDeploymentConfigSpec{CustomizedVariables: []addonv1alpha1.CustomizedVariable{{Name: "TAG", Value: "v1.2"}}}})
	testenv.Create(t, hub, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "hello-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}}})
	// The hub does not hold configmaps permissions: an administrator lets it bind this role.
	grantHub(t, hub, "bind-hello-reader", rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"},
		ResourceNames: []string{"hello-reader"}, Verbs: []string{"bind"}})
	templateAddOn(t, hub, "hello", kubeClient(currentCluster("hello-reader")))
	hello1 := enable(t, hub, "hello", spoke1.Name)
	enable(t, hub, "hello", spoke2.Name)

	t.Run("deployed and available", func(t *testing.T) {
		for _, j := range clusters {
			m := waitAddOn(t, hub, j.Name, "hello", "ManifestApplied and Available", availableAndApplied)
			want := []addonv1alpha1.RegistrationConfig{{SignerName: "kubernetes.io/kube-apiserver-client", Subject: &addonv1alpha1.Subject{
				User:   "system:open-cluster-management:cluster:" + j.Name + ":addon:hello:agent:hello-agent",
				Groups: []string{"system:open-cluster-management:cluster:" + j.Name + ":addon:hello", "system:open-cluster-management:addon:hello", "system:authenticated"}}}}
			if !slices.EqualFunc(want, m.Status.Registrations, func(a, b addonv1alpha1.RegistrationConfig) bool {
				return a.SignerName == b.SignerName && b.Subject != nil && a.Subject.User == b.Subject.User && slices.Equal(a.Subject.Groups, b.Subject.Groups)
			}) {
				t.Errorf("%s: registrations %+v, want %+v", j.Name, m.Status.Registrations, want)
			}
			if m.Status.Namespace != agentNS || m.Status.HealthCheck.Mode != addonv1alpha1.HealthCheckModeCustomized {
				t.Errorf("%s: namespace %q and health check mode %q, want %q and Customized", j.Name, m.Status.Namespace, m.Status.HealthCheck.Mode, agentNS)
			}
			if got := conditionState(m, addonv1alpha1.ManagedClusterAddOnRegistrationApplied); !strings.HasPrefix(got, "True/SetPermissionApplied") {
				t.Errorf("%s: RegistrationApplied %s", j.Name, got)
			}
		}
		d, err := spoke1.Spoke.Client.AppsV1().Deployments(agentNS).Get(ctx, "hello-agent", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := d.Spec.Template.Spec.Containers[0]
		if want := []string{"--cluster=" + spoke1.Name, "--namespace=" + agentNS}; !slices.Equal(c.Args, want) || c.Image != "quay.io/flotilla/hello:v1.2" {
			t.Errorf("the Deployment on %s runs %s %v, want quay.io/flotilla/hello:v1.2 %v", spoke1.Name, c.Image, c.Args, want)
		}
		if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "CLUSTER_NAME" && e.Value == spoke1.Name }) {
			t.Errorf("the Deployment's environment %v has no CLUSTER_NAME=%s", c.Env, spoke1.Name)
		}
		w := &workv1.ManifestWork{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: spoke1.Name, Name: addontemplate.WorkName("hello")}, w); err != nil {
			t.Fatal(err)
		}
		// Once the agent runs, nobody writes the work: the hub does not rewrite what it rendered
		// the same (the API server adds defaults to the spec it stores).
		rv := w.ResourceVersion
		time.Sleep(3 * time.Second)
		if err := hub.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			t.Fatal(err)
		}
		if w.ResourceVersion != rv || w.Generation != 1 {
			t.Errorf("the work was written again (resourceVersion %s, then %s; generation %d) though nothing it is rendered from changed", rv, w.ResourceVersion, w.Generation)
		}
		if w.Labels["open-cluster-management.io/addon-name"] != "hello" || metav1.GetControllerOf(w) == nil || metav1.GetControllerOf(w).UID != hello1.UID {
			t.Errorf("work labels %v, controller %v: want OCM's add-on label and the add-on as controller", w.Labels, metav1.GetControllerOf(w))
		}
		rb := &rbacv1.RoleBinding{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: spoke1.Name, Name: "open-cluster-management:hello:clusterrole:hello-reader:agent"}, rb); err != nil {
			t.Fatalf("the hubPermission's RoleBinding: %v", err)
		}
		if len(rb.Subjects) != 1 || rb.Subjects[0].Name != "system:open-cluster-management:cluster:"+spoke1.Name+":addon:hello" {
			t.Errorf("RoleBinding subjects %+v", rb.Subjects)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		templateAddOn(t, hub, "bad-vars", nil, "--level={{LOG_LEVEL}}")
		enable(t, hub, "bad-vars", spoke1.Name)
		templateAddOn(t, hub, "bad-role", kubeClient(currentCluster("bad-role-reader")))
		enable(t, hub, "bad-role", spoke1.Name)

		testenv.Create(t, hub, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "secrets-reader"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}})
		templateAddOn(t, hub, "bad-bind", kubeClient(currentCluster("secrets-reader")))
		enable(t, hub, "bad-bind", spoke2.Name)

		m := waitAddOn(t, hub, spoke1.Name, "bad-vars", "ManifestApplied=False naming the variable", func(m *addonv1alpha1.ManagedClusterAddOn) bool {
			return strings.HasPrefix(conditionState(m, addonv1alpha1.ManagedClusterAddOnManifestApplied), "False/AddOnTemplateInvalid")
		})
		want := "False/AddOnTemplateInvalid: AddOnTemplate bad-vars-v1: spec.agentSpec.workload.manifests[1] (Deployment " + agentNS +
			"/bad-vars-agent) uses undefined variable {{LOG_LEVEL}}: define it in the AddOnDeploymentConfig's spec.customizedVariables, or use a built-in one (CLUSTER_NAME, HUB_KUBECONFIG, INSTALL_NAMESPACE)"
		if got := conditionState(m, addonv1alpha1.ManagedClusterAddOnManifestApplied); got != want {
			t.Errorf("ManifestApplied:\nwant %s\ngot  %s", want, got)
		}
		err := hub.Get(ctx, client.ObjectKey{Namespace: spoke1.Name, Name: addontemplate.WorkName("bad-vars")}, &workv1.ManifestWork{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("a work for the template that does not render: %v", err)
		}

		m = waitAddOn(t, hub, spoke1.Name, "bad-role", "RegistrationApplied=False naming the role", func(m *addonv1alpha1.ManagedClusterAddOn) bool {
			return strings.HasPrefix(conditionState(m, addonv1alpha1.ManagedClusterAddOnRegistrationApplied), "False/SetPermissionFailed")
		})
		want = "False/SetPermissionFailed: AddOnTemplate bad-role-v1: spec.registration[0].kubeClient.hubPermissions[0].currentCluster.clusterRoleName: " +
			"ClusterRole bad-role-reader does not exist on the hub: create it, or name an existing one"
		if got := conditionState(m, addonv1alpha1.ManagedClusterAddOnRegistrationApplied); got != want {
			t.Errorf("RegistrationApplied:\nwant %s\ngot  %s", want, got)
		}
		m = waitAddOn(t, hub, spoke2.Name, "bad-bind", "RegistrationApplied=False: the hub may not bind the role", func(m *addonv1alpha1.ManagedClusterAddOn) bool {
			return strings.HasPrefix(conditionState(m, addonv1alpha1.ManagedClusterAddOnRegistrationApplied), "False/SetPermissionFailed")
		})
		want = "False/SetPermissionFailed: AddOnTemplate bad-bind-v1: spec.registration[0].kubeClient.hubPermissions[0].currentCluster.clusterRoleName: " +
			"the hub may not bind ClusterRole secrets-reader: it holds neither its permissions nor bind on it; grant the hub's identity verb bind on clusterroles \"secrets-reader\", or name another role"
		if got := conditionState(m, addonv1alpha1.ManagedClusterAddOnRegistrationApplied); got != want {
			t.Errorf("RegistrationApplied:\nwant %s\ngot  %s", want, got)
		}
		// Its agent is still deployed, and the other add-ons keep working.
		waitAddOn(t, hub, spoke1.Name, "bad-role", "ManifestApplied and Available", availableAndApplied)
		for _, j := range clusters {
			waitAddOn(t, hub, j.Name, "hello", "still ManifestApplied and Available", availableAndApplied)
		}

		// Once the role exists, the binding is made.
		testenv.Create(t, hub, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "bad-role-reader"}})
		waitAddOn(t, hub, spoke1.Name, "bad-role", "RegistrationApplied", isTrue(addonv1alpha1.ManagedClusterAddOnRegistrationApplied))
		if err := hub.Get(ctx, client.ObjectKey{Namespace: spoke1.Name, Name: "open-cluster-management:bad-role:clusterrole:bad-role-reader:agent"}, &rbacv1.RoleBinding{}); err != nil {
			t.Errorf("the binding after the role was created: %v", err)
		}
	})

	t.Run("a work the hub did not make is left alone", func(t *testing.T) {
		squat := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: spoke2.Name, Name: addontemplate.WorkName("squat")}}
		testenv.Create(t, hub, squat)
		templateAddOn(t, hub, "squat", nil)
		enable(t, hub, "squat", spoke2.Name)
		waitAddOn(t, hub, spoke2.Name, "squat", "ManifestApplied=False naming the work", func(m *addonv1alpha1.ManagedClusterAddOn) bool {
			return conditionState(m, addonv1alpha1.ManagedClusterAddOnManifestApplied) == "False/ManifestWorkApplyFailed: failed to apply manifestWork: ManifestWork "+
				spoke2.Name+"/addon-squat-deploy-0 exists and was not made by the hub for this add-on: delete or rename it"
		})
		got := &workv1.ManifestWork{}
		if err := hub.Get(ctx, client.ObjectKeyFromObject(squat), got); err != nil {
			t.Fatal(err)
		}
		if got.Generation != 1 || len(got.Spec.Workload.Manifests) != 0 || len(got.OwnerReferences) != 0 {
			t.Errorf("the hub changed a work it did not make: generation %d, %d manifests, owners %v", got.Generation, len(got.Spec.Workload.Manifests), got.OwnerReferences)
		}
	})

	t.Run("custom signer", func(t *testing.T) {
		const signerName = "example.com/hello-metrics"
		caPEM, caKeyPEM := newCA(t)
		testenv.Create(t, hub, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: configNS, Name: "metrics-ca"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: caPEM, corev1.TLSPrivateKeyKey: caKeyPEM}})
		grantSigner(t, hub, signerName, configNS, "metrics-ca")
		templateAddOn(t, hub, "metrics", []addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeCustomSigner,
			CustomSigner: &addonv1alpha1.CustomSignerRegistrationConfig{SignerName: signerName,
				SigningCA: addonv1alpha1.SigningCARef{Namespace: configNS, Name: "metrics-ca"}}}})
		enable(t, hub, "metrics", spoke2.Name)
		m := waitAddOn(t, hub, spoke2.Name, "metrics", "the custom signer in status.registrations", func(m *addonv1alpha1.ManagedClusterAddOn) bool {
			return len(m.Status.Registrations) == 1 && m.Status.Registrations[0].SignerName == signerName
		})
		// As the spoke's agent does: ask for the registered subject, as the cluster's agent.
		subject := m.Status.Registrations[0].Subject
		csr := &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "addon-metrics-", Labels: map[string]string{
				clusteridentity.ClusterNameLabel: spoke2.Name, clusteridentity.AddOnNameLabel: "metrics"}},
			Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signerName,
				Request: newRequest(t, pkix.Name{CommonName: subject.User, Organization: subject.Groups}),
				Usages:  []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}},
		}
		if err := spoke2.Reg.Hub().Current().Client.Create(ctx, csr); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = env.Hub.Client.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), csr.Name, metav1.DeleteOptions{})
		})
		var got *certificatesv1.CertificateSigningRequest
		testenv.WaitFor(t, wait, "the custom signer's certificate", func(ctx context.Context) (bool, string, error) {
			var err error
			got, err = env.Hub.Client.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			return len(got.Status.Certificate) > 0, fmt.Sprintf("conditions %v", got.Status.Conditions), nil
		})
		cb, _ := pem.Decode(got.Status.Certificate)
		ca, _ := pem.Decode(caPEM)
		cert, err := x509.ParseCertificate(cb.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		caCert, err := x509.ParseCertificate(ca.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if err := cert.CheckSignatureFrom(caCert); err != nil || cert.Subject.CommonName != subject.User {
			t.Errorf("certificate for %q signed by the CA: %v; want %q", cert.Subject.CommonName, err, subject.User)
		}

		// spoke1's agent writes spoke2's identity into its own add-on's status (agents may
		// write their add-ons' status) and asks the signer for it: the hub works the subject out
		// from the template and the cluster, so it neither approves nor signs.
		enable(t, hub, "metrics", spoke1.Name)
		m1 := waitAddOn(t, hub, spoke1.Name, "metrics", "the custom signer in status.registrations", func(m *addonv1alpha1.ManagedClusterAddOn) bool {
			return len(m.Status.Registrations) == 1 && m.Status.Registrations[0].SignerName == signerName
		})
		own := m1.Status.Registrations[0].Subject
		agent1 := spoke1.Reg.Hub().Current().Client
		poisoned := m1.DeepCopy()
		poisoned.Status.Registrations[0].Subject = subject.DeepCopy()
		if err := agent1.Status().Patch(ctx, poisoned, client.MergeFrom(m1)); err != nil {
			t.Fatalf("%s's agent writing its add-on's status.registrations: %v", spoke1.Name, err)
		}
		file := func(s *addonv1alpha1.Subject) *certificatesv1.CertificateSigningRequest {
			c := csr.DeepCopy()
			c.ObjectMeta = metav1.ObjectMeta{GenerateName: "addon-metrics-", Labels: map[string]string{
				clusteridentity.ClusterNameLabel: spoke1.Name, clusteridentity.AddOnNameLabel: "metrics"}}
			c.Spec.Request = newRequest(t, pkix.Name{CommonName: s.User, Organization: s.Groups})
			if err := agent1.Create(ctx, c); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = env.Hub.Client.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), c.Name, metav1.DeleteOptions{})
			})
			return c
		}
		stolen := file(subject)
		// Then its own identity. The signer's one worker takes new requests in the order they
		// were created, so once this one is signed the stolen one has been judged.
		mine := file(own)
		testenv.WaitFor(t, wait, spoke1.Name+"'s own custom signer certificate", func(ctx context.Context) (bool, string, error) {
			got, err := env.Hub.Client.CertificatesV1().CertificateSigningRequests().Get(ctx, mine.Name, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			return len(got.Status.Certificate) > 0, fmt.Sprintf("conditions %v", got.Status.Conditions), nil
		})
		got, err = env.Hub.Client.CertificatesV1().CertificateSigningRequests().Get(ctx, stolen.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Status.Certificate) > 0 || len(got.Status.Conditions) > 0 {
			t.Errorf("%s's agent asking for %s's identity %q: conditions %v, certificate %d bytes; want neither",
				spoke1.Name, spoke2.Name, subject.User, got.Status.Conditions, len(got.Status.Certificate))
		}
	})

	t.Run("removed with the add-on", func(t *testing.T) {
		if err := hub.Delete(ctx, hello1); err != nil {
			t.Fatal(err)
		}
		waitGone(t, "the add-on's work on the hub", func(ctx context.Context) error {
			return hub.Get(ctx, client.ObjectKey{Namespace: spoke1.Name, Name: addontemplate.WorkName("hello")}, &workv1.ManifestWork{})
		})
		waitGone(t, "the add-on's RoleBinding on the hub", func(ctx context.Context) error {
			return hub.Get(ctx, client.ObjectKey{Namespace: spoke1.Name, Name: "open-cluster-management:hello:clusterrole:hello-reader:agent"}, &rbacv1.RoleBinding{})
		})
		waitGone(t, "the agent's Deployment on "+spoke1.Name, func(ctx context.Context) error {
			_, err := spoke1.Spoke.Client.AppsV1().Deployments(agentNS).Get(ctx, "hello-agent", metav1.GetOptions{})
			return err
		})
		// The other cluster's add-on is untouched.
		waitAddOn(t, hub, spoke2.Name, "hello", "still ManifestApplied and Available", availableAndApplied)
		if _, err := spoke2.Spoke.Client.AppsV1().Deployments(agentNS).Get(ctx, "hello-agent", metav1.GetOptions{}); err != nil {
			t.Errorf("the agent on %s: %v", spoke2.Name, err)
		}
	})

	t.Run("removed when the configurations no longer name the template", func(t *testing.T) {
		cma := &addonv1alpha1.ClusterManagementAddOn{}
		if err := hub.Get(ctx, client.ObjectKey{Name: "hello"}, cma); err != nil {
			t.Fatal(err)
		}
		testenv.Update(t, hub, cma, func() {
			cma.Spec.SupportedConfigs = slices.DeleteFunc(cma.Spec.SupportedConfigs, func(c addonv1alpha1.ConfigMeta) bool { return c.Resource == "addontemplates" })
		})
		waitGone(t, "the add-on's work on the hub", func(ctx context.Context) error {
			return hub.Get(ctx, client.ObjectKey{Namespace: spoke2.Name, Name: addontemplate.WorkName("hello")}, &workv1.ManifestWork{})
		})
		waitGone(t, "the agent's Deployment on "+spoke2.Name, func(ctx context.Context) error {
			_, err := spoke2.Spoke.Client.AppsV1().Deployments(agentNS).Get(ctx, "hello-agent", metav1.GetOptions{})
			return err
		})
	})

	t.Run("installed by Placements with a Progressive rollout on 3 clusters, and removed", func(t *testing.T) {
		testPlacementsRollout(t, env, hub, all)
	})
}
