//go:build integration

package managedserviceaccount

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	mcv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/addon"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	msa "github.com/flotilla/flotilla/internal/agent/builtin/managedserviceaccount"
	"github.com/flotilla/flotilla/internal/hub/clusterprofile"
	hubmsa "github.com/flotilla/flotilla/internal/hub/managedserviceaccount"
	"github.com/flotilla/flotilla/internal/kubeconfig"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// flotillaBin is the flotilla binary, which client-go runs as the consumers' credentials plugin.
var flotillaBin string

func TestMain(m *testing.M) {
	os.Exit(testenv.MainWithFlotilla(m, testenv.Options{Spokes: 1, CRDs: true}, &flotillaBin))
}

const wait = time.Minute

func newMSA(ns, name string, validity time.Duration) *authv1beta1.ManagedServiceAccount {
	return &authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{Enabled: true,
			Validity: metav1.Duration{Duration: validity}}}}
}

// waitCondition waits until ns/name's condition typ is status with reason, and returns the object.
func waitCondition(t *testing.T, c client.Client, ns, name, typ string, status metav1.ConditionStatus, reason string) *authv1beta1.ManagedServiceAccount {
	t.Helper()
	m := &authv1beta1.ManagedServiceAccount{}
	testenv.WaitFor(t, wait, fmt.Sprintf("%s/%s %s=%s (%s)", ns, name, typ, status, reason), func(ctx context.Context) (bool, string, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, m); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		got := meta.FindStatusCondition(m.Status.Conditions, typ)
		if got == nil {
			return false, "no condition", nil
		}
		return got.Status == status && got.Reason == reason, fmt.Sprintf("%s %s: %s", got.Status, got.Reason, got.Message), nil
	})
	return m
}

// tokenClient is a client of the spoke with token, as a consumer of the Secret would make it.
func tokenClient(t *testing.T, spoke *rest.Config, s *corev1.Secret) kubernetes.Interface {
	t.Helper()
	cfg := &rest.Config{Host: spoke.Host, BearerToken: string(s.Data[corev1.ServiceAccountTokenKey]),
		TLSClientConfig: rest.TLSClientConfig{CAData: s.Data[corev1.ServiceAccountRootCAKey]}}
	return kubernetes.NewForConfigOrDie(cfg)
}

func whoAmI(ctx context.Context, kube kubernetes.Interface) (string, error) {
	r, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return r.Status.UserInfo.Username, nil
}

func TestManagedServiceAccount(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 1, CRDs: true})
	opts := testenv.TestHubOptions()
	opts.WebhookAddress = "127.0.0.1:0"
	env.StartHub(t, opts)
	env.DeleteWebhookConfigurationAtEnd(t)
	one := env.JoinSpokes(t)[0]
	hub := env.HubClient(t)
	ctx := context.Background()
	spokeCfg := one.Spoke.RESTConfig()
	spoke := kubernetes.NewForConfigOrDie(spokeCfg)
	ad, err := addon.New(addon.Options{
		ClusterName: one.Name, AgentID: "agent-" + one.Name, Hub: one.Agent.Hub(), Spoke: spokeCfg,
		BuiltIns: builtin.NewManager(one.Name, spokeCfg, clock.RealClock{}, testr.New(t).WithName("builtin"),
			msa.AddOn{Resync: 2 * time.Second}),
		InitialBackoff: 200 * time.Millisecond, MaxBackoff: 2 * time.Second,
		Log: testr.New(t).WithName("addon"),
	})
	if err != nil {
		t.Fatal(err)
	}
	testenv.RunUntilCleanup(t, ad.Run)
	testenv.Create(t, hub, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: msa.Name}})
	agentHub := one.Agent.Hub().Current().Client
	const saNS = msa.DefaultNamespace

	t.Run("outside a cluster's namespace: refused", func(t *testing.T) {
		ns := env.Namespace(t, env.Hub)
		// The hub writes its webhook configuration once its server answers.
		testenv.WaitFor(t, wait, "the hub to refuse a ManagedServiceAccount in namespace "+ns, func(ctx context.Context) (bool, string, error) {
			m := newMSA(ns, "nowhere", time.Hour)
			err := hub.Create(ctx, m)
			if err == nil {
				return false, "accepted (no webhook yet)", hub.Delete(ctx, m)
			}
			return strings.Contains(err.Error(), "metadata.namespace names no ManagedCluster"), err.Error(), nil
		})
	})

	t.Run("no ManagedServiceAccount: the agent may read no Secret of its namespace", func(t *testing.T) {
		if err := agentHub.Get(ctx, client.ObjectKey{Namespace: one.Name, Name: "anything"}, &corev1.Secret{}); !apierrors.IsForbidden(err) {
			t.Fatalf("the agent reading a Secret of its namespace: %v, want Forbidden", err)
		}
	})

	var first *corev1.Secret
	t.Run("a ServiceAccount and a token that authenticates as it, with no rights of its own", func(t *testing.T) {
		// Created, not testenv.Create: it lives on into the next subtests.
		if err := hub.Create(ctx, newMSA(one.Name, "argocd", 10*time.Minute)); err != nil {
			t.Fatal(err)
		}
		waitCondition(t, hub, one.Name, "argocd", authv1beta1.ConditionTypeSecretCreated, metav1.ConditionTrue, msa.ReasonSecretCreated)
		m := waitCondition(t, hub, one.Name, "argocd", authv1beta1.ConditionTypeTokenReported, metav1.ConditionTrue, msa.ReasonTokenReported)
		if m.Status.TokenSecretRef == nil || m.Status.TokenSecretRef.Name != "argocd" || m.Status.ExpirationTimestamp == nil {
			t.Fatalf("status %+v: want tokenSecretRef argocd and an expiration", m.Status)
		}
		if life := m.Status.ExpirationTimestamp.Sub(m.Status.TokenSecretRef.LastRefreshTimestamp.Time); life < 9*time.Minute || life > 11*time.Minute {
			t.Errorf("the token lives %s, want the 10m of spec.rotation.validity", life)
		}
		sa, err := spoke.CoreV1().ServiceAccounts(saNS).Get(ctx, "argocd", metav1.GetOptions{})
		if err != nil || sa.Labels[authv1beta1.LabelIsManagedServiceAccount] != "true" {
			t.Fatalf("ServiceAccount %s/argocd on the spoke: %v, labels %v", saNS, err, sa.GetLabels())
		}
		first = &corev1.Secret{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: one.Name, Name: "argocd"}, first); err != nil {
			t.Fatal(err)
		}
		if first.Labels[authv1beta1.LabelIsManagedServiceAccount] != "true" || len(first.OwnerReferences) != 1 || first.OwnerReferences[0].UID != m.UID {
			t.Errorf("the token Secret's labels %v and owners %v: want OCM's label and the ManagedServiceAccount as owner", first.Labels, first.OwnerReferences)
		}
		consumer := tokenClient(t, spokeCfg, first)
		if who, err := whoAmI(ctx, consumer); err != nil || who != "system:serviceaccount:"+saNS+":argocd" {
			t.Fatalf("the token authenticates on the spoke as %q (%v), want the managed ServiceAccount", who, err)
		}
		if _, err := consumer.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("listing pods with the token before anyone granted it: %v, want Forbidden: the agent grants nothing", err)
		}
		// Rights come from whoever may grant them on the cluster (here its administrator; a
		// ManifestWork's RoleBinding is the same on the spoke).
		testenv.Create(t, spoke2(t, spokeCfg), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "argocd-view"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: saNS, Name: "argocd"}}})
		testenv.WaitFor(t, wait, "the granted view right", func(ctx context.Context) (bool, string, error) {
			_, err := consumer.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
			return err == nil, fmt.Sprint(err), nil
		})
	})

	t.Run("the ServiceAccount made again: a new token, and the old one no longer works", func(t *testing.T) {
		if err := spoke.CoreV1().ServiceAccounts(saNS).Delete(ctx, "argocd", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		s := &corev1.Secret{}
		testenv.WaitFor(t, wait, "a token of the new ServiceAccount", func(ctx context.Context) (bool, string, error) {
			if err := hub.Get(ctx, client.ObjectKey{Namespace: one.Name, Name: "argocd"}, s); err != nil {
				return false, "", err
			}
			return string(s.Data[corev1.ServiceAccountTokenKey]) != string(first.Data[corev1.ServiceAccountTokenKey]), "the first token", nil
		})
		if who, err := whoAmI(ctx, tokenClient(t, spokeCfg, s)); err != nil || who != "system:serviceaccount:"+saNS+":argocd" {
			t.Errorf("the new token authenticates as %q (%v)", who, err)
		}
		waitUnauthorized(t, tokenClient(t, spokeCfg, first), "the token of the deleted ServiceAccount")
	})

	t.Run("a ClusterProfile consumer gets the token through flotilla credentials-plugin, as its own identity", func(t *testing.T) {
		consumerGetsToken(t, env, hub, one, spokeCfg)
	})

	t.Run("a ServiceAccount someone else made is not adopted", func(t *testing.T) {
		if _, err := spoke.CoreV1().ServiceAccounts(saNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: saNS, Name: "powerful"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := hub.Create(ctx, newMSA(one.Name, "powerful", time.Hour)); err != nil {
			t.Fatal(err)
		}
		m := waitCondition(t, hub, one.Name, "powerful", authv1beta1.ConditionTypeTokenReported, metav1.ConditionFalse, msa.ReasonServiceAccountNotOwned)
		if c := meta.FindStatusCondition(m.Status.Conditions, authv1beta1.ConditionTypeTokenReported); !strings.Contains(c.Message, "give the ManagedServiceAccount another name") {
			t.Errorf("the condition %q does not say what to do", c.Message)
		}
		s := &corev1.Secret{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: one.Name, Name: "powerful"}, s); err != nil || len(s.Data) != 0 {
			t.Errorf("the token Secret: %v, data keys %d: want it empty", err, len(s.Data))
		}
	})

	t.Run("a Secret someone else made is not adopted", func(t *testing.T) {
		if err := hub.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: "taken"},
			Data: map[string][]byte{"password": []byte("theirs")}}); err != nil {
			t.Fatal(err)
		}
		if err := hub.Create(ctx, newMSA(one.Name, "taken", time.Hour)); err != nil {
			t.Fatal(err)
		}
		waitCondition(t, hub, one.Name, "taken", authv1beta1.ConditionTypeSecretCreated, metav1.ConditionFalse, msa.ReasonSecretConflict)
		waitCondition(t, hub, one.Name, "taken", authv1beta1.ConditionTypeTokenReported, metav1.ConditionFalse, msa.ReasonSecretNotReady)
		s := &corev1.Secret{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: one.Name, Name: "taken"}, s); err != nil || string(s.Data["password"]) != "theirs" || len(s.Data) != 1 {
			t.Errorf("the other Secret: %v, data %v: want it as it was", err, s.Data)
		}
	})

	t.Run("what the agent's hub identity may not do", func(t *testing.T) {
		// Another cluster, with no agent: its ManagedServiceAccount's Secret is the hub's.
		const other = "msa-other"
		testenv.Create(t, hub, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: other}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}})
		testenv.WaitFor(t, wait, "the hub to make namespace "+other, func(ctx context.Context) (bool, string, error) {
			err := hub.Get(ctx, client.ObjectKey{Name: other}, &corev1.Namespace{})
			return err == nil, fmt.Sprint(err), client.IgnoreNotFound(err)
		})
		testenv.Create(t, hub, newMSA(other, "x", time.Hour))
		// Its token Secret, as its agent would make it (it has none here).
		testenv.Create(t, hub, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "x",
			Labels: map[string]string{authv1beta1.LabelIsManagedServiceAccount: "true"}}, Data: map[string][]byte{"token": []byte("theirs")}})
		testenv.WaitFor(t, wait, "the hub to bind the agents' role in "+other, func(ctx context.Context) (bool, string, error) {
			err := hub.Get(ctx, client.ObjectKey{Namespace: other, Name: hubmsa.TokenBinding}, &rbacv1.RoleBinding{})
			return err == nil, fmt.Sprint(err), client.IgnoreNotFound(err)
		})

		// The positive twin first, so that the refusals below are not a broken client's.
		own := &corev1.Secret{}
		if err := agentHub.Get(ctx, client.ObjectKey{Namespace: one.Name, Name: "argocd"}, own); err != nil {
			t.Fatalf("the agent reading its own token Secret: %v", err)
		}
		theirs := &corev1.Secret{}
		for what, err := range map[string]error{
			"read another cluster's token Secret": agentHub.Get(ctx, client.ObjectKey{Namespace: other, Name: "x"}, theirs),
			"update another cluster's token Secret": agentHub.Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "x"},
				Data: map[string][]byte{"token": []byte("forged")}}),
			"read another cluster's ManagedServiceAccounts": agentHub.List(ctx, &authv1beta1.ManagedServiceAccountList{}, client.InNamespace(other)),
			"write another cluster's ManagedServiceAccount status": agentHub.Status().Update(ctx, func() *authv1beta1.ManagedServiceAccount {
				m := &authv1beta1.ManagedServiceAccount{}
				if err := hub.Get(ctx, client.ObjectKey{Namespace: other, Name: "x"}, m); err != nil {
					t.Fatal(err)
				}
				m.Status.TokenSecretRef = &authv1beta1.SecretRef{Name: "x", LastRefreshTimestamp: metav1.Now()}
				return m
			}()),
			"create a Secret in another cluster's namespace": agentHub.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "planted"}}),
			"list the Secrets of its own namespace":          agentHub.List(ctx, &corev1.SecretList{}, client.InNamespace(one.Name)),
			"delete a Secret of its own namespace":           agentHub.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: "taken"}}),
			"create a ManagedServiceAccount":                 agentHub.Create(ctx, newMSA(one.Name, "self-made", time.Hour)),
		} {
			if !apierrors.IsForbidden(err) {
				t.Errorf("the agent may %s: %v, want Forbidden", what, err)
			}
		}
	})

	t.Run("deleted: the ServiceAccount, its tokens and the Secret go", func(t *testing.T) {
		s := &corev1.Secret{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: one.Name, Name: "argocd"}, s); err != nil {
			t.Fatal(err)
		}
		if err := hub.Delete(ctx, &authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: "argocd"}}); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, wait, "the ServiceAccount and the Secret gone", func(ctx context.Context) (bool, string, error) {
			_, saErr := spoke.CoreV1().ServiceAccounts(saNS).Get(ctx, "argocd", metav1.GetOptions{})
			secErr := hub.Get(ctx, client.ObjectKey{Namespace: one.Name, Name: "argocd"}, &corev1.Secret{})
			return apierrors.IsNotFound(saErr) && apierrors.IsNotFound(secErr), fmt.Sprintf("ServiceAccount: %v; Secret: %v", saErr, secErr), nil
		})
		waitUnauthorized(t, tokenClient(t, spokeCfg, s), "the token after its ManagedServiceAccount went")
		// The ServiceAccount someone else made stays.
		if _, err := spoke.CoreV1().ServiceAccounts(saNS).Get(ctx, "powerful", metav1.GetOptions{}); err != nil {
			t.Errorf("the ServiceAccount the agent did not make: %v, want it kept", err)
		}
	})

	t.Run("the last one gone: the agent may read no Secret again", func(t *testing.T) {
		for _, name := range []string{"powerful", "taken"} {
			if err := hub.Delete(ctx, &authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: name}}); err != nil {
				t.Fatal(err)
			}
		}
		testenv.WaitFor(t, wait, "the hub to unbind the agent's role", func(ctx context.Context) (bool, string, error) {
			err := hub.Get(ctx, client.ObjectKey{Namespace: one.Name, Name: hubmsa.TokenBinding}, &rbacv1.RoleBinding{})
			return apierrors.IsNotFound(err), fmt.Sprint(err), client.IgnoreNotFound(err)
		})
		testenv.WaitFor(t, wait, "the agent refused its namespace's Secrets", func(ctx context.Context) (bool, string, error) {
			err := agentHub.Get(ctx, client.ObjectKey{Namespace: one.Name, Name: "taken"}, &corev1.Secret{})
			return apierrors.IsForbidden(err), fmt.Sprint(err), nil
		})
	})

	t.Run("ttlSecondsAfterCreation: the hub deletes it", func(t *testing.T) {
		m := newMSA(one.Name, "ephemeral", time.Hour)
		m.Spec.TTLSecondsAfterCreation = ptr.To[int32](3)
		testenv.Create(t, hub, m)
		testenv.WaitFor(t, wait, "the ManagedServiceAccount deleted", func(ctx context.Context) (bool, string, error) {
			err := hub.Get(ctx, client.ObjectKeyFromObject(m), &authv1beta1.ManagedServiceAccount{})
			return apierrors.IsNotFound(err), fmt.Sprint(err), client.IgnoreNotFound(err)
		})
	})
}

// spoke2 is a controller-runtime client of the spoke as its administrator.
func spoke2(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitUnauthorized waits until the spoke refuses kube's token: the API server keeps a token it
// authenticated for up to 10 s (its token cache), so a revoked token works until then.
func waitUnauthorized(t *testing.T, kube kubernetes.Interface, what string) {
	t.Helper()
	testenv.WaitFor(t, 30*time.Second, what+" refused", func(ctx context.Context) (bool, string, error) {
		who, err := whoAmI(ctx, kube)
		return apierrors.IsUnauthorized(err), fmt.Sprintf("authenticated as %q (%v)", who, err), nil
	})
}

// consumerGetsToken plays a ClusterProfile consumer: it finds the cluster's access provider in
// a ClusterProfile, runs flotilla credentials-plugin through client-go's exec authentication as a
// hub identity that may read the ManagedServiceAccount argocd and its Secret, and reaches the
// spoke as that ServiceAccount. An identity without the Secret gets nothing, and is told why.
func consumerGetsToken(t *testing.T, env *testenv.Env, hub client.Client, one *testenv.Joined, spokeCfg *rest.Config) {
	ctx := context.Background()
	ca, err := kubeconfig.CA(spokeCfg)
	if err != nil {
		t.Fatal(err)
	}
	// The spoke's address, as an administrator (or the agent's --spoke-external-server-urls) sets it.
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: one.Name}}
	testenv.Update(t, hub, mc, func() {
		mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: spokeCfg.Host, CABundle: ca}}
	})
	ns := env.Namespace(t, env.Hub)
	testenv.Create(t, hub, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "global"},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "global"}})
	var provider *mcv1alpha1.AccessProvider
	testenv.WaitFor(t, wait, "ClusterProfile "+ns+"/"+one.Name+" with the hub's access provider", func(ctx context.Context) (bool, string, error) {
		p := &mcv1alpha1.ClusterProfile{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: one.Name}, p); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		for i := range p.Status.AccessProviders {
			if p.Status.AccessProviders[i].Name == clusterprofile.ProviderName && p.Status.AccessProviders[i].Cluster != nil {
				provider = &p.Status.AccessProviders[i]
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("providers %+v", p.Status.AccessProviders), nil
	})

	// Two consumers on the hub: one may read the ManagedCluster, the ManagedServiceAccount and its
	// Secret; the other all but the Secret.
	rules := []rbacv1.PolicyRule{{APIGroups: []string{"authentication.open-cluster-management.io"}, Resources: []string{"managedserviceaccounts"}, ResourceNames: []string{"argocd"}, Verbs: []string{"get"}}}
	allowed := consumer(t, env, hub, ns, "consumer", one.Name, append(rules,
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"argocd"}, Verbs: []string{"get"}}))
	refused := consumer(t, env, hub, ns, "no-secret", one.Name, rules)

	spokeAs := func(hubKubeconfig string) kubernetes.Interface {
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["spoke"] = &clientcmdapi.Cluster{Server: provider.Cluster.Server, CertificateAuthorityData: provider.Cluster.CertificateAuthorityData,
			Extensions: map[string]runtime.Object{}}
		for _, e := range provider.Cluster.Extensions {
			cfg.Clusters["spoke"].Extensions[e.Name] = &runtime.Unknown{Raw: e.Extension.Raw}
		}
		cfg.AuthInfos["plugin"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1",
			Command: flotillaBin, Args: []string{"credentials-plugin", "--managed-serviceaccount", "argocd", "--kubeconfig", hubKubeconfig},
			ProvideClusterInfo: true, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}
		cfg.Contexts["spoke"] = &clientcmdapi.Context{Cluster: "spoke", AuthInfo: "plugin"}
		cfg.CurrentContext = "spoke"
		rc, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		return kubernetes.NewForConfigOrDie(rc)
	}
	if who, err := whoAmI(ctx, spokeAs(allowed)); err != nil || who != "system:serviceaccount:"+msa.DefaultNamespace+":argocd" {
		t.Fatalf("the consumer reaches the spoke as %q (%v), want the managed ServiceAccount", who, err)
	}
	if who, err := whoAmI(ctx, spokeAs(refused)); err == nil {
		t.Fatalf("a consumer that may not read the Secret reached the spoke as %q", who)
	}
	// What it is told: the plugin's error, as client-go's caller sees it on standard error.
	cmd := exec.Command(flotillaBin, "credentials-plugin", "--managed-serviceaccount", "argocd", "--kubeconfig", refused)
	cmd.Env = append(os.Environ(), `KUBERNETES_EXEC_INFO={"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"cluster":{"server":"`+
		provider.Cluster.Server+`","config":{"clusterName":"`+one.Name+`"}}}}`)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "may not read Secret "+one.Name+"/argocd on the hub") {
		t.Errorf("the plugin for an identity without the Secret: %v, said %q; want a refusal naming the Secret", err, out)
	}
}

// consumer makes ServiceAccount name in ns on the hub, allowed to get ManagedCluster cluster and,
// in the cluster's namespace, what rules say, and returns a kubeconfig file for it.
func consumer(t *testing.T, env *testenv.Env, hub client.Client, ns, name, cluster string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	testenv.Create(t, hub, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}
	testenv.Create(t, hub, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclusters"}, ResourceNames: []string{cluster}, Verbs: []string{"get"}}}})
	testenv.Create(t, hub, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ns + "-" + name}, Subjects: subject})
	testenv.Create(t, hub, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: ns + "-" + name}, Rules: rules})
	testenv.Create(t, hub, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: ns + "-" + name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: ns + "-" + name}, Subjects: subject})
	tr, err := env.Hub.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hubCfg := env.Hub.RESTConfig()
	ca, err := kubeconfig.CA(hubCfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: hubCfg.Host, CertificateAuthorityData: ca}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: name}
	cfg.CurrentContext = "hub"
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
