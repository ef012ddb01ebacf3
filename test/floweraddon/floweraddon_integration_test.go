//go:build integration

package floweraddon

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
	"github.com/flotilla/flotilla/internal/hub/addontemplate"
	"github.com/flotilla/flotilla/internal/hub/flower"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const wait = 90 * time.Second

func conditionState(m *addonv1alpha1.ManagedClusterAddOn, typ string) string {
	c := meta.FindStatusCondition(m.Status.Conditions, typ)
	if c == nil {
		return "none"
	}
	return string(c.Status) + "/" + c.Reason + ": " + c.Message
}

// waitAddOn waits until cond holds for flower-addon on the cluster and returns it.
func waitAddOn(t *testing.T, c client.Client, cluster, what string, cond func(*addonv1alpha1.ManagedClusterAddOn) bool) *addonv1alpha1.ManagedClusterAddOn {
	t.Helper()
	m := &addonv1alpha1.ManagedClusterAddOn{}
	testenv.WaitFor(t, wait, fmt.Sprintf("flower-addon on %s: %s", cluster, what), func(ctx context.Context) (bool, string, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: flower.AddonName}, m); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		var parts []string
		for _, c := range m.Status.Conditions {
			parts = append(parts, fmt.Sprintf("%s=%s/%s (%s)", c.Type, c.Status, c.Reason, c.Message))
		}
		return cond(m), strings.Join(parts, "; "), nil
	})
	return m
}

func hasPrefix(typ, prefix string) func(*addonv1alpha1.ManagedClusterAddOn) bool {
	return func(m *addonv1alpha1.ManagedClusterAddOn) bool {
		return strings.HasPrefix(conditionState(m, typ), prefix)
	}
}

// waitGone waits until get finds nothing.
func waitGone(t *testing.T, what string, get func(ctx context.Context) error) {
	t.Helper()
	testenv.WaitFor(t, 2*wait, what+" to be deleted", func(ctx context.Context) (bool, string, error) {
		err := get(ctx)
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, "still there", err
	})
}

func enable(t *testing.T, c client.Client, cluster string) *addonv1alpha1.ManagedClusterAddOn {
	t.Helper()
	m := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: flower.AddonName}}
	testenv.Create(t, c, m)
	return m
}

// manifests are the work's objects by "Kind namespace/name".
func manifests(t *testing.T, w *workv1.ManifestWork) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, m := range w.Spec.Workload.Manifests {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(m.Raw); err != nil {
			t.Fatal(err)
		}
		out[u.GetKind()+" "+strings.TrimPrefix(u.GetNamespace()+"/"+u.GetName(), "/")] = u
	}
	return out
}

// TestFlowerAddOn enables flower-addon on two spokes with real registration and work agents.
func TestFlowerAddOn(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2, CRDs: true})
	spokes := joinAll(t, env)
	for _, j := range spokes {
		env.AddNodes(t, j.Spoke, localk8s.NodePool{Name: "flower", Count: 1, CPU: resource.MustParse("4"), Memory: resource.MustParse("8Gi")})
	}
	hub := env.HubClient(t)
	ctx := context.Background()
	spoke1, spoke2 := spokes[0], spokes[1]

	// Someone else's Service superlink is in the way before the add-on is enabled.
	theirs := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: flower.Namespace, Name: flower.SuperLinkName},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "theirs", Port: 8080}}}}
	testenv.Create(t, hub, theirs)

	cma := &addonv1alpha1.ClusterManagementAddOn{}
	testenv.WaitFor(t, wait, "the hub's ClusterManagementAddOn flower-addon", func(ctx context.Context) (bool, string, error) {
		err := hub.Get(ctx, client.ObjectKey{Name: flower.AddonName}, cma)
		return err == nil, "", client.IgnoreNotFound(err)
	})
	if len(cma.Spec.SupportedConfigs) != 2 || cma.Labels[builtinaddon.Label] != flower.AddonName {
		t.Fatalf("ClusterManagementAddOn flower-addon: labels %v, supported configs %+v", cma.Labels, cma.Spec.SupportedConfigs)
	}

	enable(t, hub, spoke1.Name)

	t.Run("someone else's object is left alone and reported", func(t *testing.T) {
		want := "False/SuperLinkConflict: Service flower-system/superlink exists and is not Flotilla's (no label addon.flotilla.io/built-in=flower-addon): " +
			"the hub leaves it alone; delete or rename it so that the hub can make its own"
		m := waitAddOn(t, hub, spoke1.Name, "SuperLinkReady=False naming the Service", hasPrefix(flower.ConditionSuperLink, "False/SuperLinkConflict"))
		if got := conditionState(m, flower.ConditionSuperLink); got != want {
			t.Errorf("SuperLinkReady:\nwant %s\ngot  %s", want, got)
		}
		got := &corev1.Service{}
		if err := hub.Get(ctx, client.ObjectKeyFromObject(theirs), got); err != nil {
			t.Fatal(err)
		}
		if len(got.Labels) != 0 || len(got.Spec.Ports) != 1 || got.Spec.Ports[0].Name != "theirs" {
			t.Errorf("the hub changed a Service it did not make: labels %v, ports %+v", got.Labels, got.Spec.Ports)
		}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: flower.Namespace, Name: flower.SuperLinkName}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
			t.Errorf("Deployment superlink while the Service is someone else's: %v", err)
		}
	})

	// Once it is gone, the hub makes its own (enabling the add-on on spoke2 wakes it at once).
	if err := hub.Delete(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	m2 := enable(t, hub, spoke2.Name)

	var caPEM, caKey, servingKey []byte
	t.Run("the hub runs the SuperLink in flower-system", func(t *testing.T) {
		waitAddOn(t, hub, spoke1.Name, "SuperLinkReady no longer a conflict", hasPrefix(flower.ConditionSuperLink, "False/SuperLinkUnavailable"))
		for _, o := range []client.Object{&corev1.Service{}, &appsv1.Deployment{}} {
			if err := hub.Get(ctx, client.ObjectKey{Namespace: flower.Namespace, Name: flower.SuperLinkName}, o); err != nil {
				t.Fatal(err)
			}
			if o.GetLabels()[builtinaddon.Label] != flower.AddonName {
				t.Errorf("%T superlink labels %v", o, o.GetLabels())
			}
		}
		svc := &corev1.Service{}
		_ = hub.Get(ctx, client.ObjectKey{Namespace: flower.Namespace, Name: flower.SuperLinkName}, svc)
		var ports []string
		for _, p := range svc.Spec.Ports {
			ports = append(ports, fmt.Sprintf("%s=%d", p.Name, p.Port))
		}
		if diff := slices.Compare([]string{"appio=9091", "fleet=9092", "control=9093"}, ports); diff != 0 {
			t.Errorf("Service superlink ports %v", ports)
		}
		d := &appsv1.Deployment{}
		_ = hub.Get(ctx, client.ObjectKey{Namespace: flower.Namespace, Name: flower.SuperLinkName}, d)
		if got, want := d.Spec.Template.Spec.Containers[0].Args, flower.SuperLinkArgs(true); !slices.Equal(got, want) {
			t.Errorf("SuperLink args %v, want %v", got, want)
		}
		ca, serving := &corev1.Secret{}, &corev1.Secret{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: flower.Namespace, Name: flower.CASecret}, ca); err != nil {
			t.Fatal(err)
		}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: flower.Namespace, Name: flower.ServingSecret}, serving); err != nil {
			t.Fatal(err)
		}
		caPEM, caKey, servingKey = ca.Data["ca.crt"], ca.Data["ca.key"], serving.Data["tls.key"]
		if len(caKey) == 0 || len(servingKey) == 0 {
			t.Fatalf("CA Secret keys %v, serving Secret keys %v", keysOf(ca.Data), keysOf(serving.Data))
		}
		leaf := parseCert(t, serving.Data["tls.crt"])
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(caPEM)
		for _, name := range []string{"superlink.flower-system.svc", "superlink.flower-system.svc.cluster.local"} {
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
				t.Errorf("the SuperLink's certificate for %s: %v", name, err)
			}
		}
	})

	t.Run("enabling delivers the SuperNode and the CA certificate", func(t *testing.T) {
		for _, j := range spokes {
			waitAddOn(t, hub, j.Name, "ManifestApplied and Available", func(m *addonv1alpha1.ManagedClusterAddOn) bool {
				return meta.IsStatusConditionTrue(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnManifestApplied) &&
					meta.IsStatusConditionTrue(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
			})
		}
		w := &workv1.ManifestWork{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: spoke1.Name, Name: addontemplate.WorkName(flower.AddonName)}, w); err != nil {
			t.Fatal(err)
		}
		objs := manifests(t, w)
		var got []string
		for k := range objs {
			got = append(got, k)
		}
		slices.Sort(got)
		want := []string{"ConfigMap flower-addon/flower-ca", "Deployment flower-addon/flower-supernode", "Namespace flower-addon", "Service flower-addon/flower-supernode"}
		if !slices.Equal(want, got) {
			t.Errorf("work manifests %v, want %v", got, want)
		}
		if cm := objs["ConfigMap flower-addon/flower-ca"]; cm != nil {
			data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
			if !bytes.Equal([]byte(data["ca.crt"]), caPEM) || len(data) != 1 {
				t.Errorf("the delivered ConfigMap holds %v, want only ca.crt, the hub CA's certificate", keysOf(data))
			}
		}
		d, err := spoke1.Spoke.Client.AppsV1().Deployments(flower.SuperNodeNamespace).Get(ctx, flower.SuperNodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantArgs := []string{"--isolation", "process", "--superlink", flower.DefaultAddress, "--host", "0.0.0.0", "--port", "9094",
			"--node-config", `cluster-name="` + spoke1.Name + `"`, "--root-certificates", "/etc/flower/ca/ca.crt"}
		if c := d.Spec.Template.Spec.Containers[0]; !slices.Equal(c.Args, wantArgs) || c.Image != flower.DefaultSuperNodeImage {
			t.Errorf("the SuperNode on %s runs %s %v, want %s %v", spoke1.Name, c.Image, c.Args, flower.DefaultSuperNodeImage, wantArgs)
		}
		if _, err := spoke1.Spoke.Client.CoreV1().Services(flower.SuperNodeNamespace).Get(ctx, flower.SuperNodeName, metav1.GetOptions{}); err != nil {
			t.Errorf("Service flower-supernode on %s: %v", spoke1.Name, err)
		}
		testenv.WaitFor(t, wait, "feature label addon-flower-addon=available on "+spoke1.Name, func(ctx context.Context) (bool, string, error) {
			mc := &clusterv1.ManagedCluster{}
			err := hub.Get(ctx, client.ObjectKey{Name: spoke1.Name}, mc)
			v := mc.Labels["feature.open-cluster-management.io/addon-flower-addon"]
			return v == "available", "label " + v, err
		})
	})

	t.Run("the spoke never receives a private key", func(t *testing.T) {
		if len(caKey) == 0 {
			t.Fatal("the hub's keys were not read (see the subtest before): nothing to look for")
		}
		// Nothing the hub sends any cluster holds a key: every ManifestWork of every cluster.
		works := &workv1.ManifestWorkList{}
		if err := hub.List(ctx, works); err != nil {
			t.Fatal(err)
		}
		for _, w := range works.Items {
			raw, err := json.Marshal(w.Spec)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(raw, []byte("PRIVATE KEY")) || containsKey(raw, caKey) || containsKey(raw, servingKey) {
				t.Errorf("ManifestWork %s/%s holds a private key", w.Namespace, w.Name)
			}
		}
		// And nothing on the spokes does: every Secret and ConfigMap of every namespace.
		for _, j := range spokes {
			secrets, err := j.Spoke.Client.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range secrets.Items {
				for k, v := range s.Data {
					if containsKey(v, caKey) || containsKey(v, servingKey) {
						t.Errorf("%s: Secret %s/%s %s holds a key of the hub's Flower certificates", j.Name, s.Namespace, s.Name, k)
					}
				}
			}
			cms, err := j.Spoke.Client.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, cm := range cms.Items {
				for k, v := range cm.Data {
					if strings.Contains(v, "PRIVATE KEY") {
						t.Errorf("%s: ConfigMap %s/%s %s holds a private key", j.Name, cm.Namespace, cm.Name, k)
					}
				}
			}
		}
		// The check above sees a key where one is (or it would prove nothing).
		asJSON, _ := json.Marshal(map[string]string{"data": string(caKey)})
		if !containsKey(append([]byte("x"), caKey...), caKey) || !containsKey(asJSON, caKey) {
			t.Fatal("containsKey does not find a key")
		}
	})

	t.Run("a bad variable is refused with the field and the fix", func(t *testing.T) {
		const ns = "flower-configs"
		testenv.Create(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		testenv.Create(t, hub, &addonv1alpha1.AddOnDeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad-address"},
			Spec: addonv1alpha1.AddOnDeploymentConfigSpec{CustomizedVariables: []addonv1alpha1.CustomizedVariable{
				{Name: flower.VarAddress, Value: "https://superlink.example.com"}, {Name: flower.VarPort, Value: "9092"},
				{Name: flower.VarImage, Value: flower.DefaultSuperNodeImage}}}})
		w := &workv1.ManifestWork{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: spoke2.Name, Name: addontemplate.WorkName(flower.AddonName)}, w); err != nil {
			t.Fatal(err)
		}
		testenv.Update(t, hub, m2, func() {
			m2.Spec.Configs = []addonv1alpha1.AddOnConfig{{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{
				Group: addonv1alpha1.GroupVersion.Group, Resource: "addondeploymentconfigs"}, ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: ns, Name: "bad-address"}}}
		})
		want := `False/ConfigurationInvalid: AddOnDeploymentConfig flower-configs/bad-address spec.customizedVariables[0] SUPERLINK_ADDRESS="https://superlink.example.com": ` +
			`host "https://superlink.example.com" is neither an IP address nor a lower-case DNS name: give the name or address the clusters reach the SuperLink at, without scheme, port or path`
		m := waitAddOn(t, hub, spoke2.Name, "ManifestApplied=False naming the variable", hasPrefix(addonv1alpha1.ManagedClusterAddOnManifestApplied, "False/ConfigurationInvalid"))
		if got := conditionState(m, addonv1alpha1.ManagedClusterAddOnManifestApplied); got != want {
			t.Errorf("ManifestApplied:\nwant %s\ngot  %s", want, got)
		}
		got := &workv1.ManifestWork{}
		if err := hub.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
			t.Fatal(err)
		}
		if got.Generation != w.Generation {
			t.Errorf("the work changed (generation %d to %d) though its config was refused", w.Generation, got.Generation)
		}
	})

	t.Run("disabling removes the work; disabled everywhere, the SuperLink goes", func(t *testing.T) {
		m1 := &addonv1alpha1.ManagedClusterAddOn{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: spoke1.Name, Name: flower.AddonName}, m1); err != nil {
			t.Fatal(err)
		}
		if err := hub.Delete(ctx, m1); err != nil {
			t.Fatal(err)
		}
		waitGone(t, "the work on "+spoke1.Name, func(ctx context.Context) error {
			return hub.Get(ctx, client.ObjectKey{Namespace: spoke1.Name, Name: addontemplate.WorkName(flower.AddonName)}, &workv1.ManifestWork{})
		})
		waitGone(t, "the SuperNode on "+spoke1.Name, func(ctx context.Context) error {
			_, err := spoke1.Spoke.Client.AppsV1().Deployments(flower.SuperNodeNamespace).Get(ctx, flower.SuperNodeName, metav1.GetOptions{})
			return err
		})
		// Still enabled on spoke2: the SuperLink stays.
		if err := hub.Get(ctx, client.ObjectKey{Namespace: flower.Namespace, Name: flower.SuperLinkName}, &appsv1.Deployment{}); err != nil {
			t.Errorf("Deployment superlink while spoke2 has the add-on: %v", err)
		}
		if err := hub.Delete(ctx, m2); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
			waitGone(t, fmt.Sprintf("%T superlink", o), func(ctx context.Context) error {
				return hub.Get(ctx, client.ObjectKey{Namespace: flower.Namespace, Name: flower.SuperLinkName}, o)
			})
		}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: flower.Namespace, Name: flower.CASecret}, &corev1.Secret{}); err != nil {
			t.Errorf("the CA after the add-on was disabled everywhere: %v (it stays, so that the clusters trust the same CA next time)", err)
		}
	})
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// containsKey says whether data holds key: its PEM, a line of its PEM body (as JSON holds PEM),
// its DER or the DER's base64.
func containsKey(data, key []byte) bool {
	if bytes.Contains(data, bytes.TrimSpace(key)) {
		return true
	}
	if lines := bytes.Split(key, []byte("\n")); len(lines) > 2 && len(lines[1]) > 32 && bytes.Contains(data, lines[1]) {
		return true
	}
	if b, _ := pem.Decode(key); b != nil {
		return bytes.Contains(data, b.Bytes) || bytes.Contains(data, []byte(base64.StdEncoding.EncodeToString(b.Bytes)[:40]))
	}
	return false
}

func parseCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatal("no PEM certificate")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
