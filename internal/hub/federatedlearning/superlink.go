package federatedlearning

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"hash/fnv"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/internal/certs"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
	"github.com/flotilla/flotilla/internal/hub/flower"
)

// A Flower federation that uses flower-addon's SuperLink address (the default) gets a SuperLink
// of its own, which no other federation shares, and SuperNodes of its own on its client
// clusters. Flower 1.42 serves its Fleet, Runtime and Control APIs on one port and
// authenticates no Control API caller (open-source Flower has one account), so:
//
//   - the SuperLink listens on its pod's loopback only (127.0.0.1:<port>), where
//     `kubectl port-forward` reaches it: a person may submit and read runs when Kubernetes lets
//     them port-forward to pods in the federation's namespace;
//   - the front (`flotilla flower-front`, a container of the same pod, on the pod's address)
//     is all the network reaches: it forwards the Fleet API, where Flower checks every
//     SuperNode's signature against the keys registered (the hub makes a key per client cluster
//     and registers it through the Control API; the front refuses a SuperNode's registering
//     itself, which Flower would refuse only with --enable-supernode-auth, and that needs TLS on
//     the SuperLink itself), and
//     the Runtime API, which Flower authenticates with a shared secret
//     (--superexec-auth-secret-file, which only the federation's ServerApp and its clusters'
//     SuperNodes and ClientApps hold); the Control API only with the hub's bearer token;
//   - the port is a node port the API server allocates to the federation alone (a Service of
//     type NodePort, its port, target port and node port the same number), so the clusters
//     reach the front at the hub's host and that port, and two federations' SuperLinks never
//     ask for the same port even where pods share one network (a local fleet).

// Names of a federation's own SuperLink and SuperNodes.
func superLinkName(fl *flv1alpha1.FederatedLearning) string { return fl.Name + "-superlink" }
func superNodeName(fl *flv1alpha1.FederatedLearning) string { return fl.Name + "-supernode" }

// Keys of the federation's Secret <name>-superlink on the hub (node.<cluster>: that cluster's
// SuperNode key, OpenSSH format) and of <name>-supernode on each cluster (node.key).
const (
	keyCA           = "ca.crt"
	keySuperExec    = "superexec"
	keyControlToken = "control-token"
	keyNodePrefix   = "node."
	keyNode         = "node.key"
)

// Where the federation's pods mount their Secret.
const (
	superLinkSecretDir = "/etc/flower/superlink"
	superNodeSecretDir = "/etc/flower/supernode"
)

// annotationSecret on pod templates is the hash of what they mount: a new certificate or key
// restarts them.
const annotationSecret = "federation-ai.flotilla.io/secret-hash"

// Node ports the API server allocates by default (--service-node-port-range).
const (
	nodePortFirst = 30000
	nodePortCount = 2768
	// portTries bounds how many taken ports the allocation walks past.
	portTries = 64
)

// SuperLinks are the hub's settings for federations' own SuperLinks.
type SuperLinks struct {
	// Host is where the clusters reach the hub's nodes (the host of the hub's
	// --flower-superlink-address): the SuperNodes' --superlink is Host:<the federation's port>,
	// and it is a name of the SuperLink's certificate.
	Host string
	// SuperLinkImage runs the SuperLink, SuperNodeImage the SuperNodes, FrontImage the front
	// (Flotilla's image: `flotilla flower-front`).
	SuperLinkImage, SuperNodeImage, FrontImage string
}

// candidatePort is the i-th node port tried for fl: from a hash of its namespace and name, so
// that federations seldom try the same one.
func candidatePort(fl *flv1alpha1.FederatedLearning, i int) int32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(fl.Namespace + "/" + fl.Name))
	return int32(nodePortFirst + (int(h.Sum32()%nodePortCount)+i)%nodePortCount)
}

// superLinkService is the federation's SuperLink's Service: type NodePort with port, target
// port and node port all port, selecting the SuperLink's pod (its front).
func superLinkService(fl *flv1alpha1.FederatedLearning, port int32) *corev1.Service {
	s := &corev1.Service{ObjectMeta: owned(fl, "superlink")}
	s.Name = superLinkName(fl)
	s.Spec = corev1.ServiceSpec{
		Type:     corev1.ServiceTypeNodePort,
		Selector: map[string]string{NameLabel: fl.Name, ComponentLabel: "superlink"},
		Ports: []corev1.ServicePort{{Name: "fleet", Port: port, TargetPort: intstr.FromInt32(port), NodePort: port,
			Protocol: corev1.ProtocolTCP}},
	}
	return s
}

// linkMaterial is what a federation's SuperLink and SuperNodes hold: the CA certificate the
// SuperNodes and the ServerApp trust, the front's serving certificate and key, the SuperExec
// secret, the hub's Control API token, and per client cluster its SuperNode's private key.
type linkMaterial struct {
	CA, Cert, Key, SuperExec, ControlToken []byte
	// Nodes are the SuperNodes' private keys by cluster (OpenSSH PEM, as flower-supernode's
	// --auth-supernode-private-key reads it).
	Nodes map[string][]byte
}

// Lifetimes of a federation's certificates: a federation runs for hours or days; its
// certificates are made again when a third of their life is left.
const (
	linkCALifetime   = 2 * 365 * 24 * time.Hour
	linkCertLifetime = 365 * 24 * time.Hour
)

// linkSANs are the names of the front's certificate: the Service's, as the ServerApp and the
// hub reach it, and the host the clusters reach.
func linkSANs(fl *flv1alpha1.FederatedLearning, host string) ([]string, []net.IP) {
	n := superLinkName(fl)
	dns := []string{n, n + "." + fl.Namespace, n + "." + fl.Namespace + ".svc", n + "." + fl.Namespace + ".svc.cluster.local"}
	if ip := net.ParseIP(host); ip != nil {
		return dns, []net.IP{ip}
	}
	if host != "" && !slices.Contains(dns, host) {
		dns = append(dns, host)
	}
	return dns, nil
}

// newLinkMaterial makes a CA of the federation's own, the front's certificate for its names,
// the SuperExec secret and the Control API token.
func newLinkMaterial(fl *flv1alpha1.FederatedLearning, host string, now time.Time) (*linkMaterial, error) {
	ca, err := certs.NewCA("flotilla-federation-"+fl.Namespace+"-"+fl.Name, now, linkCALifetime)
	if err != nil {
		return nil, err
	}
	dns, ips := linkSANs(fl, host)
	cert, key, err := ca.Issue(x509.Certificate{
		Subject: pkix.Name{CommonName: dns[2]}, DNSNames: dns, IPAddresses: ips,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, now, linkCertLifetime)
	if err != nil {
		return nil, err
	}
	return &linkMaterial{CA: ca.CertPEM(), Cert: cert, Key: key, SuperExec: randomHex(32), ControlToken: randomHex(32), Nodes: map[string][]byte{}}, nil
}

func randomHex(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return []byte(hex.EncodeToString(b))
}

// certProblem says why m's certificate will not do for fl at host and now ("" when it will).
func (m *linkMaterial) certProblem(fl *flv1alpha1.FederatedLearning, host string, now time.Time) string {
	pair, err := tls.X509KeyPair(m.Cert, m.Key)
	if err != nil {
		return fmt.Sprintf("unreadable (%v)", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return fmt.Sprintf("unreadable (%v)", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(m.CA) {
		return "no CA certificate"
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return fmt.Sprintf("does not verify against its CA (%v)", err)
	}
	dns, ips := linkSANs(fl, host)
	if !slices.Equal(leaf.DNSNames, dns) || !slices.EqualFunc(leaf.IPAddresses, ips, net.IP.Equal) {
		return fmt.Sprintf("names %v %v, not %v %v", leaf.DNSNames, leaf.IPAddresses, dns, ips)
	}
	if !now.Before(leaf.NotAfter.Add(-leaf.NotAfter.Sub(leaf.NotBefore) / 3)) {
		return "expires at " + leaf.NotAfter.Format(time.RFC3339)
	}
	return ""
}

// newNodeKey makes a SuperNode's key: ECDSA P-256 (Flower takes NIST curves), the private key in
// OpenSSH form for flower-supernode.
func newNodeKey() ([]byte, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	b, err := ssh.MarshalPrivateKey(k, "")
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(b), nil
}

// nodePublicKey is the public key of a SuperNode's private key as Flower registers and sends
// it: PEM SubjectPublicKeyInfo.
func nodePublicKey(private []byte) ([]byte, error) {
	raw, err := ssh.ParseRawPrivateKey(private)
	if err != nil {
		return nil, err
	}
	k, ok := raw.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("not an ECDSA key but %T", raw)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// secretData and readLinkMaterial convert between linkMaterial and the Secret <name>-superlink.
func (m *linkMaterial) secretData() map[string][]byte {
	d := map[string][]byte{keyCA: m.CA, corev1.TLSCertKey: m.Cert, corev1.TLSPrivateKeyKey: m.Key,
		keySuperExec: m.SuperExec, keyControlToken: m.ControlToken}
	for c, k := range m.Nodes {
		d[keyNodePrefix+c] = k
	}
	return d
}

func readLinkMaterial(d map[string][]byte) *linkMaterial {
	m := &linkMaterial{CA: d[keyCA], Cert: d[corev1.TLSCertKey], Key: d[corev1.TLSPrivateKeyKey],
		SuperExec: d[keySuperExec], ControlToken: d[keyControlToken], Nodes: map[string][]byte{}}
	for k, v := range d {
		if c, ok := strings.CutPrefix(k, keyNodePrefix); ok && c != "" {
			m.Nodes[c] = v
		}
	}
	return m
}

// pemHash is a short hash of parts, for pod annotations that restart pods when it changes.
func pemHash(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		_, _ = h.Write(p)
		_, _ = h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// hash is a short hash of what the SuperLink's pod mounts.
func (m *linkMaterial) hash() string {
	return pemHash(m.CA, m.Cert, m.Key, m.SuperExec, m.ControlToken)
}

// RecordNamespace holds the hub's record of each Flower federation's own SuperLink (Secret
// federation-<uid>): its CA certificate, serving key, secrets and SuperNode keys. Only the hub
// reads it (its Role there); the federation's pods get a copy of what they need.
const RecordNamespace = builtinaddon.FlowerNamespace

// annotationPodSecret on the record names the pods' copy made from it.
const annotationPodSecret = "federation-ai.flotilla.io/pod-secret"

func recordKey(fl *flv1alpha1.FederatedLearning) client.ObjectKey {
	return client.ObjectKey{Namespace: RecordNamespace, Name: "federation-" + string(fl.UID)}
}

// recordSecret is the hub's record of m, naming the pods' copy.
func recordSecret(fl *flv1alpha1.FederatedLearning, m *linkMaterial, podCopy string) *corev1.Secret {
	l := labels(fl, "superlink")
	l[NamespaceLabel], l[UIDLabel] = fl.Namespace, string(fl.UID)
	k := recordKey(fl)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name, Labels: l, Annotations: map[string]string{annotationPodSecret: podCopy}},
		Type:       corev1.SecretTypeOpaque, Data: m.secretData(),
	}
}

// podSecretName names the pods' copy of m: <name>-superlink-<hash of what it holds>, so that a
// change makes a new copy (and rolls the pods), and no one who does not hold the keys can know
// the name before the hub makes it.
func podSecretName(fl *flv1alpha1.FederatedLearning, m *linkMaterial) string {
	return superLinkName(fl) + "-" + m.hash()[:10]
}

// podSecret is what the federation's SuperLink and ServerApp pods mount, in its namespace and
// owned by it: the CA certificate, the front's certificate and key, the SuperExec secret and the
// Control API token; no SuperNode key.
func podSecret(fl *flv1alpha1.FederatedLearning, m *linkMaterial) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: owned(fl, "superlink"), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{
		keyCA: m.CA, corev1.TLSCertKey: m.Cert, corev1.TLSPrivateKeyKey: m.Key, keySuperExec: m.SuperExec, keyControlToken: m.ControlToken}}
	s.Name = podSecretName(fl, m)
	return s
}

// superLinkDeployment is the federation's SuperLink: flower-superlink on the pod's loopback
// (process isolation: the ServerApp is the Deployment <name>-serverapp; the SuperExec secret)
// and the front on the pod's address, both on port.
func superLinkDeployment(fl *flv1alpha1.FederatedLearning, o SuperLinks, port int32, secret string) *appsv1.Deployment {
	p := strconv.Itoa(int(port))
	mount := []corev1.VolumeMount{{Name: "superlink", MountPath: superLinkSecretDir, ReadOnly: true}}
	link := corev1.Container{
		Name: "superlink", Image: o.SuperLinkImage,
		Args: []string{"--insecure", "--isolation", "process", "--host", "127.0.0.1", "--port", p,
			"--superexec-auth-secret-file", superLinkSecretDir + "/" + keySuperExec},
		VolumeMounts: mount, SecurityContext: flower.ContainerSecurity(),
	}
	front := corev1.Container{
		Name: "front", Image: o.FrontImage,
		Args: []string{"flower-front", "--listen", "$(POD_IP):" + p, "--upstream", "http://127.0.0.1:" + p,
			"--tls-cert-file", superLinkSecretDir + "/" + corev1.TLSCertKey, "--tls-key-file", superLinkSecretDir + "/" + corev1.TLSPrivateKeyKey,
			"--control-token-file", superLinkSecretDir + "/" + keyControlToken},
		Env:             []corev1.EnvVar{{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}},
		Ports:           []corev1.ContainerPort{{Name: "fleet", ContainerPort: port, Protocol: corev1.ProtocolTCP}},
		ReadinessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}}, PeriodSeconds: 5},
		VolumeMounts:    mount,
		SecurityContext: flower.ContainerSecurity(),
	}
	d := deployment(owned(fl, "superlink"), "superlink", o.SuperLinkImage, nil, nil)
	d.Name = superLinkName(fl)
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType} // one SuperLink holds the state
	pod := &d.Spec.Template
	pod.Spec.Containers = []corev1.Container{link, front}
	pod.Spec.AutomountServiceAccountToken = ptr.To(false)
	pod.Spec.SecurityContext = flower.PodSecurity()
	pod.Spec.Volumes = []corev1.Volume{{Name: "superlink", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secret, DefaultMode: ptr.To[int32](0o440),
		Items: []corev1.KeyToPath{{Key: corev1.TLSCertKey, Path: corev1.TLSCertKey}, {Key: corev1.TLSPrivateKeyKey, Path: corev1.TLSPrivateKeyKey},
			{Key: keySuperExec, Path: keySuperExec}, {Key: keyControlToken, Path: keyControlToken}},
	}}}}
	return d
}

// superNodeObjects are what a client cluster runs for the federation, in the SuperNode's
// namespace: the Secret <name>-supernode (its key, the CA certificate, the SuperExec secret),
// and the SuperNode's Deployment and Service <name>-supernode, on port for its ClientAppIo API.
func superNodeObjects(fl *flv1alpha1.FederatedLearning, o SuperLinks, ns, cluster string, port int32, m *linkMaterial) (*corev1.Secret, *appsv1.Deployment, *corev1.Service) {
	meta := metav1.ObjectMeta{Name: superNodeName(fl), Namespace: ns, Labels: labels(fl, "supernode")}
	sec := &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{keyNode: m.Nodes[cluster], keyCA: m.CA, keySuperExec: m.SuperExec}}
	host := o.Host
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		host = "[" + host + "]"
	}
	p := strconv.Itoa(int(port))
	d := deployment(meta, "supernode", o.SuperNodeImage, []string{
		"--isolation", "process", "--superlink", host + ":" + p,
		"--root-certificates", superNodeSecretDir + "/" + keyCA,
		"--auth-supernode-private-key", superNodeSecretDir + "/" + keyNode,
		"--superexec-auth-secret-file", superNodeSecretDir + "/" + keySuperExec,
		"--host", "0.0.0.0", "--port", p,
		"--node-config", `cluster-name="` + cluster + `"`,
	}, nil)
	pod := &d.Spec.Template
	pod.Annotations = map[string]string{annotationSecret: pemHash(sec.Data[keyNode], m.CA, m.SuperExec)}
	pod.Spec.AutomountServiceAccountToken = ptr.To(false)
	c := &pod.Spec.Containers[0]
	c.Ports = []corev1.ContainerPort{{Name: "clientappio", ContainerPort: port, Protocol: corev1.ProtocolTCP}}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "supernode", MountPath: superNodeSecretDir, ReadOnly: true}}
	c.SecurityContext = flower.ContainerSecurity()
	pod.Spec.Volumes = []corev1.Volume{{Name: "supernode", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: superNodeName(fl), DefaultMode: ptr.To[int32](0o440)}}}}
	pod.Spec.SecurityContext = flower.PodSecurity()
	svc := &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeClusterIP, Selector: map[string]string{NameLabel: fl.Name, ComponentLabel: "supernode"},
		Ports: []corev1.ServicePort{{Name: "clientappio", Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}},
	}}
	return sec, d, svc
}
