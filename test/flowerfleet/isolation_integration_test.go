//go:build integration

package flowerfleet

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/federatedlearning"
	"github.com/flotilla/flotilla/internal/hub/flowerctl"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestTenantsAreIsolated runs two tenants' Flower federations, each in a namespace of its own,
// on the same two clusters, and plays tenant B against tenant A with everything B holds: its own
// federation's Control API token, SuperExec secret and SuperNode key, and the address of A's
// SuperLink (a node port, which anyone can find). B can neither see nor run anything of A's:
// A's front refuses B at the Control API (with or without B's token), a SuperNode registering
// itself, B's SuperNode key at the Fleet API, and a task request without A's SuperExec secret at
// A's SuperLink and at A's SuperNode; B's run, though it names A's federation, runs on B's
// SuperLink only, and A's status shows A's run only. Each refusal is checked beside the request
// that succeeds with A's own credentials, so that a refusal for another reason would fail.
func TestTenantsAreIsolated(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	data := filepath.Join(f.dir, "data")
	spokes := []string{"spoke-1", "spoke-2"}
	f.python(t, "-m", "flotilla_fl.data", "generate", "--out", data, "--clusters", strings.Join(spokes, ","), "--seed", "11")
	for i, c := range spokes {
		f.claim(t, i, DataClaim, filepath.Join(data, c))
	}
	f.waitClaims(t, spokes...)
	for _, c := range spokes {
		f.enableFlower(t, c)
	}
	f.waitFlowerAvailable(t, spokes...)

	a := f.tenant(t, "tenant-a")
	b := f.tenant(t, "tenant-b")
	for _, fl := range []*flv1alpha1.FederatedLearning{a, b} {
		cur := f.waitFL(t, fl, fl.Namespace+": two clients running and the server ready", func(st *flv1alpha1.FederatedLearningStatus) bool {
			return slices.Equal(clientsIn(st, flv1alpha1.ClientRunning), spokes) && ready(st, "ServerReady")
		})
		*fl = *cur
		f.waitSuperNodes(t, fl, 2)
	}
	pa, pb := superLinkPort(t, a), superLinkPort(t, b)
	if pa == pb {
		t.Fatalf("both federations' SuperLinks have port %d", pa)
	}
	aLink := f.hubIP + ":" + strconv.Itoa(int(pa))
	aCreds, bCreds := f.credentials(t, a), f.credentials(t, b)

	// The Control API of A's SuperLink through its front: A's token (the hub's) works; none, and
	// B's, are refused, for reading runs and for registering a SuperNode.
	control := func(token string) *flowerctl.Client {
		return &flowerctl.Client{Address: aLink, AllowLocal: true, Token: token, TLS: &tls.Config{RootCAs: aCreds.pool, ServerName: f.hubIP}}
	}
	if _, err := control(aCreds.token).ListRuns(ctx, flowerctl.ListRunsOptions{}); err != nil {
		t.Fatalf("the hub's token at A's front: ListRuns: %v", err)
	}
	for who, token := range map[string]string{"no token": "", "B's token": bCreds.token} {
		if runs, err := control(token).ListRuns(ctx, flowerctl.ListRunsOptions{}); err == nil || !strings.Contains(err.Error(), "HTTP 403") {
			t.Errorf("%s at A's front: ListRuns = %v, %v; want HTTP 403", who, runs, err)
		}
		if _, err := control(token).RegisterNode(ctx, bCreds.nodePublic, ""); err == nil || !strings.Contains(err.Error(), "HTTP 403") {
			t.Errorf("%s at A's front: RegisterNode = %v; want HTTP 403", who, err)
		}
	}

	// The Fleet API: a SuperNode may not register itself; B's SuperNode key, which A's SuperLink
	// never registered, is not admitted, while A's own is (the check and its control).
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: aCreds.pool, ServerName: f.hubIP}}}
	defer hc.CloseIdleConnections()
	code, body := f.post(t, hc, "https://"+aLink+"/v1/fleet/register-node", fleetRequest(bCreds.nodePublic), signedHeaders(t, bCreds.nodeKey))
	if code != http.StatusForbidden {
		t.Errorf("B's SuperNode registering itself at A's front: HTTP %d %s, want 403", code, body)
	}
	if code, body = f.post(t, hc, "https://"+aLink+"/v1/fleet/activate-node", fleetRequest(bCreds.nodePublic), signedHeaders(t, bCreds.nodeKey)); code == http.StatusOK {
		t.Errorf("B's SuperNode key activated at A's SuperLink: HTTP %d %s", code, body)
	}
	t.Logf("B's SuperNode key activating at A's Fleet API: HTTP %d %s", code, body)
	nodes, err := control(aCreds.token).ListNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var aNode uint64
	for _, n := range nodes {
		if bytes.Equal(n.PublicKeyPEM, bCreds.nodePublic) {
			t.Errorf("A's SuperLink lists B's SuperNode key: %+v", n)
		}
		if bytes.Equal(n.PublicKeyPEM, aCreds.nodePublic) {
			aNode = n.ID
		}
	}
	if aNode == 0 {
		t.Fatalf("A's SuperLink does not list A's SuperNode of spoke-1: %+v", nodes)
	}
	// A heartbeat for A's SuperNode of spoke-1: signed with B's key it is refused; with A's own
	// key it is taken (the control of the check).
	if code, body = f.post(t, hc, "https://"+aLink+"/v1/fleet/send-node-heartbeat", heartbeat(aNode), signedHeaders(t, bCreds.nodeKey)); code != http.StatusUnauthorized {
		t.Errorf("a heartbeat for A's node signed with B's key: HTTP %d %s, want 401", code, body)
	}
	if code, body = f.post(t, hc, "https://"+aLink+"/v1/fleet/send-node-heartbeat", heartbeat(aNode), signedHeaders(t, aCreds.nodeKey)); code != http.StatusOK {
		t.Errorf("a heartbeat for A's node signed with A's key: HTTP %d %s, want 200 (the control of the check above)", code, body)
	}

	// The Runtime API, where the ServerApp (at the SuperLink) and the ClientApps (at each
	// SuperNode) take their tasks: without A's SuperExec secret, no task.
	for where, url := range map[string]string{
		"A's SuperLink":          "https://" + aLink + "/v1/runtime/acquire-task",
		"A's SuperNode, spoke-1": "http://" + testenv.RuntimeAddress(1) + ":" + strconv.Itoa(int(pa)) + "/v1/runtime/acquire-task",
	} {
		code, body := f.post(t, hc, url, nil, nil)
		if code == http.StatusOK || !strings.Contains(strings.ToLower(body), "authentication") {
			t.Errorf("a task request without A's SuperExec secret at %s: HTTP %d %s; want it refused for its authentication", where, code, body)
		}
	}

	// Runs: A submits to its own SuperLink; B submits to its own a run that names A's
	// federation. A binds A's run only, and B's run is nowhere on A's SuperLink.
	model := filepath.Join(f.dir, "model")
	runCfg := func(fl *flv1alpha1.FederatedLearning, uid string) string {
		return fmt.Sprintf(`num-server-rounds=2 min-available-clients=2 test-path=%q output-path=%q %s=%q`,
			filepath.Join(data, "test"), filepath.Join(model, fl.Namespace), federatedlearning.RunConfigKey, uid)
	}
	bRun := f.flwrRun(t, b, runCfg(b, string(a.UID)))
	aRun := f.flwrRun(t, a, runCfg(a, string(a.UID)))
	done := f.waitFL(t, a, "A's training completed", func(st *flv1alpha1.FederatedLearningStatus) bool {
		return st.Phase == flv1alpha1.PhaseCompleted || st.Phase == flv1alpha1.PhaseFailed
	})
	if done.Status.Phase != flv1alpha1.PhaseCompleted || done.Status.FlowerRunID != strconv.FormatUint(aRun, 10) {
		t.Errorf("A ended %s with run %q (%s); want Completed with its own run %d, never B's %d", done.Status.Phase, done.Status.FlowerRunID, done.Status.Message, aRun, bRun)
	}
	runs, err := control(aCreds.token).ListRuns(ctx, flowerctl.ListRunsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, []uint64{aRun}) {
		t.Errorf("A's SuperLink holds runs %v, want A's run %d alone", ids, aRun)
	}
	// B's run ran on B's SuperLink (submitted first, it had finished or run beside A's); B's
	// federation follows only runs that name it, so it bound none.
	bLink := &flowerctl.Client{Address: f.hubIP + ":" + strconv.Itoa(int(pb)), AllowLocal: true, Token: bCreds.token,
		TLS: &tls.Config{RootCAs: bCreds.pool, ServerName: f.hubIP}}
	if got, err := bLink.GetRun(ctx, bRun); err != nil {
		t.Errorf("B's run %d on B's SuperLink: %v", bRun, err)
	} else {
		t.Logf("B's run %d on B's SuperLink: %s", bRun, got.StatusText())
	}
	bNow := &flv1alpha1.FederatedLearning{}
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(b), bNow); err != nil {
		t.Fatal(err)
	}
	if bNow.Status.FlowerRunID != "" {
		t.Errorf("B's federation bound run %s, which names A's federation", bNow.Status.FlowerRunID)
	}
}

// tenant creates a namespace and a Flower FederatedLearning in it, over spoke-1 and spoke-2.
func (f *fleet) tenant(t *testing.T, ns string) *flv1alpha1.FederatedLearning {
	t.Helper()
	testenv.Create(t, f.c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	fl := &flv1alpha1.FederatedLearning{
		ObjectMeta: metav1.ObjectMeta{Name: "softmax", Namespace: ns},
		Spec: flv1alpha1.FederatedLearningSpec{
			Framework: flv1alpha1.FrameworkFlower,
			Server:    flv1alpha1.ServerSpec{Image: AppImage, Rounds: 2, MinAvailableClients: 2},
			Client: flv1alpha1.ClientSpec{Image: AppImage, Placement: clusterv1beta1.PlacementSpec{
				ClusterSets: []string{"default"},
				Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
					ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: DataClaim, Operator: metav1.LabelSelectorOpExists}}},
				}}},
			}},
		},
	}
	testenv.Create(t, f.c, fl)
	return fl
}

// creds is what a tenant holds of its own federation: the CA its pods trust, the Control API
// token (in the pods' Secret in its namespace), and the SuperNode key of spoke-1 (on that
// cluster, in the Secret its work delivers).
type creds struct {
	pool       *x509.CertPool
	token      string
	nodeKey    *ecdsa.PrivateKey
	nodePublic []byte
}

func (f *fleet) credentials(t *testing.T, fl *flv1alpha1.FederatedLearning) creds {
	t.Helper()
	ctx := context.Background()
	l := &corev1.SecretList{}
	if err := f.c.List(ctx, l, client.InNamespace(fl.Namespace)); err != nil {
		t.Fatal(err)
	}
	var c creds
	for _, s := range l.Items {
		if strings.HasPrefix(s.Name, fl.Name+"-superlink-") {
			c.pool = x509.NewCertPool()
			c.pool.AppendCertsFromPEM(s.Data["ca.crt"])
			c.token = string(s.Data["control-token"])
		}
	}
	spoke := &corev1.Secret{}
	if err := f.spokeClient(t, 0).Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: fl.Name + "-supernode"}, spoke); err != nil {
		t.Fatalf("%s's SuperNode Secret on spoke-1: %v", fl.Namespace, err)
	}
	raw, err := ssh.ParseRawPrivateKey(spoke.Data["node.key"])
	if err != nil {
		t.Fatal(err)
	}
	c.nodeKey = raw.(*ecdsa.PrivateKey)
	der, err := x509.MarshalPKIXPublicKey(&c.nodeKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	c.nodePublic = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	if c.token == "" || c.pool == nil {
		t.Fatalf("%s: no pods' Secret %s-superlink-* with the CA and token", fl.Namespace, fl.Name)
	}
	return c
}

// fleetRequest is a Fleet API RegisterNodeFleetRequest or ActivateNodeRequest: public_key (1),
// and for activation heartbeat_interval (2), 30 s.
func fleetRequest(publicKey []byte) []byte {
	b := protowire.AppendTag(nil, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, publicKey)
	b = protowire.AppendTag(b, 2, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, 0x403e000000000000) // 30.0
}

// heartbeat is a Fleet API SendNodeHeartbeatRequest: node (1) {node_id (1)}, heartbeat_interval
// (2), 30 s.
func heartbeat(nodeID uint64) []byte {
	node := protowire.AppendTag(nil, 1, protowire.VarintType)
	node = protowire.AppendVarint(node, nodeID)
	b := protowire.AppendTag(nil, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, node)
	b = protowire.AppendTag(b, 2, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, 0x403e000000000000)
}

// signedHeaders are a SuperNode's Fleet API headers, as flower-supernode signs them: its public
// key, the time, and the ECDSA-SHA256 signature of the time.
func signedHeaders(t *testing.T, key *ecdsa.PrivateKey) http.Header {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000000-07:00")
	sum := sha256.Sum256([]byte(now))
	sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return http.Header{
		"Flwr-Public-Key": {base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))},
		"Flwr-Timestamp":  {now},
		"Flwr-Signature":  {base64.StdEncoding.EncodeToString(sig)},
	}
}

// post sends a protobuf request and returns the status and body.
func (f *fleet) post(t *testing.T, hc *http.Client, url string, body []byte, h http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/protobuf")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, strings.TrimSpace(string(out))
}

// spokeClient is a client of spoke i's API server.
func (f *fleet) spokeClient(t *testing.T, i int) client.Client {
	t.Helper()
	c, err := client.New(f.env.Spokes[i].RESTConfig(), client.Options{Scheme: f.c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
