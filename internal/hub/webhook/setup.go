package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/flotilla/flotilla/config/crd"
	"github.com/flotilla/flotilla/internal/contract/fencing"
	"github.com/flotilla/flotilla/internal/contract/wellknown"
)

// ConfigurationName names the ValidatingWebhookConfiguration the hub keeps (the agents name it
// too, in their errors).
const ConfigurationName = wellknown.HubWebhookConfiguration

// Names of the webhooks in the configuration.
const (
	ManagedClusterWebhookName = "managedclusters.hub.flotilla.io"
	BindingWebhookName        = "managedclustersetbindings.hub.flotilla.io"
)

// Files a certificate directory holds: the serving pair, and optionally the authority that
// signed it (without it the API server checks the serving certificate against its system roots).
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
	CAFile   = "ca.crt"
)

// Options says where the webhook listens and with which certificate.
type Options struct {
	// Address is the host:port to listen on, such as 127.0.0.1:9443; port 0 picks a free one. The
	// API server is sent to the same host, or to 127.0.0.1 when the host is unspecified (all
	// interfaces).
	Address string
	// CertDir holds CertFile and KeyFile, reloaded when they change, and optionally CAFile. When
	// empty, the hub makes an authority and a serving certificate for the loopback addresses,
	// localhost and the listening host at every start.
	CertDir string
	// Clock dates the certificates the hub makes and times the leader's checks of the
	// configuration; nil is the real clock.
	Clock clock.WithTicker
	// Resync is how often the leader reads the configuration back besides watching it;
	// zero is DefaultResync.
	Resync time.Duration
	// Service, when set, is the Service in front of every replica (a hub running in the
	// cluster): the configurations name it instead of this replica's address, and CertDir must
	// hold a certificate for its DNS name with the authority that signed it.
	Service *ServiceRef
}

// Setup adds to mgr the webhook server, which every replica runs, and the registrars, which run
// on the leader: they write the webhook configuration and the add-on CRDs' conversion webhook
// once the server answers and keep them while the replica leads. cs makes the
// SubjectAccessReviews and writes the configuration.
func Setup(mgr manager.Manager, cs kubernetes.Interface, opts Options) error {
	host, portText, err := net.SplitHostPort(opts.Address)
	if err != nil {
		return fmt.Errorf("webhook address %q: %w; give host:port, such as 127.0.0.1:9443", opts.Address, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return fmt.Errorf("webhook address %q: port %q is not a number from 0 to 65535", opts.Address, portText)
	}
	if port == 0 {
		// The configuration names the port, so pick it now. Another program may take it before
		// the server listens; the server then fails and the hub stops, saying so.
		if port, err = freePort(host); err != nil {
			return fmt.Errorf("webhook address %q: %w", opts.Address, err)
		}
		portText = strconv.Itoa(port)
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}

	so := webhook.Options{Host: host, Port: port}
	var caBundle []byte
	if opts.CertDir == "" {
		cert, ca, err := selfSigned(clk.Now(), host)
		if err != nil {
			return err
		}
		caBundle = ca
		so.TLSOpts = []func(*tls.Config){func(c *tls.Config) {
			c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil }
		}}
	} else {
		so.CertDir, so.CertName, so.KeyName = opts.CertDir, CertFile, KeyFile
		caBundle, err = os.ReadFile(filepath.Join(opts.CertDir, CAFile))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("reading the webhook's certificate authority: %w", err)
		}
	}

	hub, err := selfUser(cs)
	if err != nil {
		return err
	}
	can := SubjectAccessReviews(cs)
	srv := webhook.NewServer(so)
	srv.Register(ManagedClusterPath, &admission.Webhook{Handler: ManagedClusterHandler(mgr.GetScheme(), can, Namespaces(cs), hub)})
	srv.Register(BindingPath, &admission.Webhook{Handler: BindingHandler(mgr.GetScheme(), can)})
	srv.Register(ManifestWorkPath, &admission.Webhook{Handler: ManifestWorkHandler(mgr.GetScheme(), can)})
	srv.Register(FederatedLearningPath, &admission.Webhook{Handler: FederatedLearningHandler(mgr.GetScheme(), can)})
	srv.Register(ManagedServiceAccountPath, &admission.Webhook{Handler: ManagedServiceAccountHandler(mgr.GetScheme(), Clusters(mgr.GetAPIReader()))})
	srv.Register(PolicyPath, &admission.Webhook{Handler: PolicyHandler(mgr.GetScheme())})
	srv.Register(ConversionPath, ConversionHandler())
	if err := mgr.Add(srv); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("webhook", srv.StartedChecker()); err != nil {
		return err
	}
	resync := opts.Resync
	if resync <= 0 {
		resync = DefaultResync
	}
	endpoint := Endpoint{URL: "https://" + net.JoinHostPort(urlHost(host), portText), Service: opts.Service}
	if opts.Service != nil && opts.CertDir == "" {
		return fmt.Errorf("a webhook behind Service %s/%s needs --webhook-cert-dir with a certificate for the Service's DNS name and its ca.crt", opts.Service.Namespace, opts.Service.Name)
	}
	started := func() error { return srv.StartedChecker()(nil) }
	if err := mgr.Add(&registrar{
		cs:      cs,
		want:    Configuration(endpoint, caBundle),
		started: started,
		clock:   clk,
		resync:  resync,
	}); err != nil {
		return err
	}
	crds, err := apiextclient.NewForConfig(mgr.GetConfig())
	if err != nil {
		return err
	}
	return mgr.Add(&conversionRegistrar{
		crds:    crds.CustomResourceDefinitions(),
		names:   crd.ConvertedByWebhook,
		want:    endpoint.conversion(ConversionPath, caBundle),
		started: started,
		clock:   clk,
		resync:  resync,
	})
}

// selfUser is the user name the hub runs as, which the webhook lets write the hub's annotations
// of ManagedClusters (hubAnnotationEdits). Every replica runs as the same identity.
func selfUser(cs kubernetes.Interface) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("asking the API server who the hub is (a SelfSubjectReview), so that the webhook lets only the hub write a ManagedCluster's %s annotations: %w",
			fencing.ClusterAnnotationPrefix, err)
	}
	if r.Status.UserInfo.Username == "" {
		return "", fmt.Errorf("the API server's SelfSubjectReview gave the hub no user name: the webhook could not tell the hub's writes of a ManagedCluster's %s annotations from others'; run the hub with an identity that has one",
			fencing.ClusterAnnotationPrefix)
	}
	return r.Status.UserInfo.Username, nil
}

// freePort asks the kernel for a free port on host.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// urlHost is the host the API server is sent to for a listening host.
func urlHost(host string) string {
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return "127.0.0.1"
	}
	return host
}

// Configuration is the webhook configuration for a server at endpoint whose certificate caBundle
// vouches for.
func Configuration(endpoint Endpoint, caBundle []byte) *admissionregistrationv1.ValidatingWebhookConfiguration {
	hook := func(name, path, version, resource string, scope admissionregistrationv1.ScopeType) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name:         name,
			ClientConfig: endpoint.admission(path, caBundle),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{ClusterGroup}, APIVersions: []string{version},
					Resources: []string{resource}, Scope: ptr.To(scope),
				},
			}},
			// Requests in other served versions are converted to this one.
			MatchPolicy: ptr.To(admissionregistrationv1.Equivalent),
			// Unchecked writes would hand out acceptance and set membership, put words in a
			// cluster's mouth (claims) and run images as the hub: refuse while the hub cannot answer.
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](10),
			// The API server's defaults, spelled out so that the configuration read back equals
			// this one and the leader rewrites it only when someone changed it.
			NamespaceSelector: &metav1.LabelSelector{},
			ObjectSelector:    &metav1.LabelSelector{},
		}
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		// Labeled, so that `flotilla uninstall hub` knows the hub made it.
		ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName, Labels: map[string]string{wellknown.PartOfLabel: wellknown.PartOf}},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			hook(ManagedClusterWebhookName, ManagedClusterPath, "v1", "managedclusters", admissionregistrationv1.ClusterScope),
			hook(BindingWebhookName, BindingPath, "v1beta2", "managedclustersetbindings", admissionregistrationv1.NamespacedScope),
			specChangedHook(WorkGroup, hook(ManifestWorkWebhookName, ManifestWorkPath, "v1", "manifestworks", admissionregistrationv1.NamespacedScope)),
			claimsHook(hook(ClaimsWebhookName, ManagedClusterPath, "v1", "managedclusters/status", admissionregistrationv1.ClusterScope)),
			specChangedHook(FederationGroup, hook(FederatedLearningWebhookName, FederatedLearningPath, "v1alpha1", "federatedlearnings", admissionregistrationv1.NamespacedScope)),
			createOnly(inGroup(AuthenticationGroup, hook(ManagedServiceAccountWebhookName, ManagedServiceAccountPath, "v1beta1", "managedserviceaccounts", admissionregistrationv1.NamespacedScope))),
			inGroup(PolicyGroup, hook(PolicyWebhookName, PolicyPath, "v1", "policies", admissionregistrationv1.NamespacedScope)),
		},
	}
}
