package addontemplate

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/hub/csrs"
)

// DefaultSignerNamespace holds a custom signer's CA Secret when the template names no
// namespace (OCM's addon manager namespace).
const DefaultSignerNamespace = "open-cluster-management-hub"

// CustomSignerDuration is how long a certificate from a custom signer lasts (OCM's).
const CustomSignerDuration = 24 * time.Hour

// ApprovedReason is the reason of the Approved condition the hub gives a custom signer's request.
const ApprovedReason = "AutoApprovedByAddOnTemplate"

// SignerReconciler approves and signs the CertificateSigningRequests of template add-ons' custom signers,
// as OCM's template agent does, with the CA in the Secret the template's customSigner.signingCA
// names. Unlike OCM, which approves every request for the signer, a request is approved only
// when it was filed by an agent of the cluster in its cluster-name label, for the subject the
// template registers for that cluster's add-on (computed from the template, not read from
// status.registrations, which agents may write), for client usages.
//
// The hub holds neither `approve` and `sign` on arbitrary signers nor read access to Secrets:
// whoever sets up a custom signer grants the hub `approve` and `sign` on signers/<signer name>
// and `get` on the CA Secret (docs/addons.md). Without them the request stays pending and the
// refusal is logged.
type SignerReconciler struct {
	Client client.Client
	// Reader reads the CA Secrets from the API server (the hub caches no Secrets); default: the
	// manager's API reader.
	Reader       client.Reader
	Certificates kubernetes.Interface
	Clock        clock.PassiveClock
}

var _ reconcile.Reconciler = (*SignerReconciler)(nil)

// SetupWithManager registers the signer.
func (s *SignerReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if s.Reader == nil {
		s.Reader = mgr.GetAPIReader()
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("addontemplate-signer").
		For(&certificatesv1.CertificateSigningRequest{}).
		Complete(s)
}

// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=get;list;watch
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/approval;certificatesigningrequests/status,verbs=update

// Reconcile approves and signs one request of a template add-on's custom signer.
func (s *SignerReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	csr := &certificatesv1.CertificateSigningRequest{}
	if err := s.Client.Get(ctx, req.NamespacedName, csr); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if csr.Spec.SignerName == certificatesv1.KubeAPIServerClientSignerName || len(csr.Status.Certificate) > 0 || csrs.HasCondition(csr, certificatesv1.CertificateDenied) ||
		csrs.HasCondition(csr, certificatesv1.CertificateFailed) {
		return reconcile.Result{}, nil
	}
	cluster, name := csr.Labels[clusteridentity.ClusterNameLabel], csr.Labels[clusteridentity.AddOnNameLabel]
	if cluster == "" || name == "" {
		return reconcile.Result{}, nil
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := s.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mca); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	ref := desiredConfig(mca, "addontemplates")
	if ref == nil || !mca.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("request", csr.Name, "signer", csr.Spec.SignerName)
	// Which template applies is read from status.configReferences, which the agent may write:
	// only one the hub chose for this cluster's add-on, and made for this add-on, is used.
	tmpl, refusal, err := allowedTemplate(ctx, s.Client, mca, ref)
	if err != nil {
		return reconcile.Result{}, err
	}
	if refusal != "" {
		log.Info("not approving a custom signer's request", "why", refusal)
		return reconcile.Result{}, nil
	}
	if tmpl == nil {
		return reconcile.Result{}, nil
	}
	var signer *addonv1alpha1.CustomSignerRegistrationConfig
	for _, r := range tmpl.Spec.Registration {
		if r.Type == addonv1alpha1.RegistrationTypeCustomSigner && r.CustomSigner != nil && r.CustomSigner.SignerName == csr.Spec.SignerName {
			signer = r.CustomSigner
		}
	}
	if signer == nil {
		return reconcile.Result{}, nil
	}
	x509Req, err := checkCustomRequest(csr, mca, tmpl)
	if err != nil {
		log.Info("not approving a custom signer's request", "why", err.Error())
		return reconcile.Result{}, nil
	}
	if !csrs.HasCondition(csr, certificatesv1.CertificateApproved) {
		msg := "approved for add-on " + mca.Name + " of cluster " + cluster + " by its AddOnTemplate " + tmpl.Name
		if csr, err = csrs.Approve(ctx, s.Certificates, csr, ApprovedReason, msg, s.Clock); err != nil {
			return reconcile.Result{}, fmt.Errorf("approving %s for signer %s (the hub needs approve on signers/%s): %w", req.Name, signer.SignerName, signer.SignerName, err)
		}
	}
	ns := signer.SigningCA.Namespace
	if ns == "" {
		ns = DefaultSignerNamespace
	}
	secret := &corev1.Secret{}
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: signer.SigningCA.Name}, secret); err != nil {
		return reconcile.Result{}, fmt.Errorf("reading the signing CA Secret %s/%s of AddOnTemplate %s (spec.registration customSigner.signingCA; the hub needs get on it): %w",
			ns, signer.SigningCA.Name, tmpl.Name, err)
	}
	certPEM, err := sign(x509Req, secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey], s.Clock.Now())
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("signing %s with the CA in Secret %s/%s: %w", req.Name, ns, signer.SigningCA.Name, err)
	}
	csr = csr.DeepCopy()
	csr.Status.Certificate = certPEM
	if _, err := s.Certificates.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		return reconcile.Result{}, fmt.Errorf("writing the certificate of %s (the hub needs sign on signers/%s): %w", req.Name, signer.SignerName, err)
	}
	return reconcile.Result{}, nil
}

// clientUsages are the usages a custom signer's certificate may carry.
var clientUsages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}

// checkCustomRequest checks that csr asks a custom signer of tmpl, filed by an agent of mca's
// cluster, for the subject tmpl registers for mca's add-on on that cluster, for client usages,
// with a valid signature, and returns the parsed request.
//
// The expected subject is computed here from the template and the cluster (Registrations), as
// the hub writes it to status.registrations, and never read from that status: agents may write
// their add-ons' status, so an agent of cluster A could name cluster B's add-on identity there.
// mca's namespace comes from the request's cluster-name label and is checked against the
// identity that filed the request (the API server sets spec.username and spec.groups, not the
// requester).
func checkCustomRequest(csr *certificatesv1.CertificateSigningRequest, mca *addonv1alpha1.ManagedClusterAddOn, tmpl *addonv1alpha1.AddOnTemplate) (*x509.CertificateRequest, error) {
	cluster, addon, signer := mca.Namespace, mca.Name, csr.Spec.SignerName
	regs := Registrations(cluster, addon, tmpl)
	i := slices.IndexFunc(regs, func(r addonv1alpha1.RegistrationConfig) bool { return r.SignerName == signer })
	if signer == certificatesv1.KubeAPIServerClientSignerName || i < 0 {
		return nil, fmt.Errorf("signer %q is not a custom signer of AddOnTemplate %s (spec.registration[].customSigner.signerName)", signer, tmpl.Name)
	}
	want := regs[i].Subject
	if want == nil {
		want = &addonv1alpha1.Subject{}
	}
	requester, _, ok := clusteridentity.ParseUser(csr.Spec.Username)
	if !ok || requester != cluster || !slices.Contains(csr.Spec.Groups, clusteridentity.Group(cluster)) ||
		!slices.Contains(csr.Spec.Groups, clusteridentity.ManagedClustersGroup) {
		return nil, fmt.Errorf("filed by %q in groups %v, not by an agent of cluster %s", csr.Spec.Username, csr.Spec.Groups, cluster)
	}
	for _, u := range csr.Spec.Usages {
		if !slices.Contains(clientUsages, u) {
			return nil, fmt.Errorf("usage %q is not one of %v", u, clientUsages)
		}
	}
	if !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
		return nil, fmt.Errorf("usages %v lack %q", csr.Spec.Usages, certificatesv1.UsageClientAuth)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("the request is not a PEM certificate request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, err
	}
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("the request's signature: %w", err)
	}
	if !sameUser(req.Subject.CommonName, want.User, cluster, addon) {
		return nil, fmt.Errorf("user (common name) %q is not %s", req.Subject.CommonName, wantUser(want.User, cluster, addon))
	}
	sorted := func(s []string) []string { return slices.Sorted(slices.Values(s)) }
	if !slices.Equal(sorted(req.Subject.Organization), sorted(want.Groups)) {
		return nil, fmt.Errorf("groups (organizations) %q are not the registered %q", req.Subject.Organization, want.Groups)
	}
	if !slices.Equal(sorted(req.Subject.OrganizationalUnit), sorted(want.OrganizationUnits)) {
		return nil, fmt.Errorf("organizational units %q are not the registered %q", req.Subject.OrganizationalUnit, want.OrganizationUnits)
	}
	return req, nil
}

// sameUser says whether cn is the registered user. A subject that names no user gets, as OCM's
// agent asks, the add-on's default user with the agent's own id, which the hub cannot know: any
// agent id of this cluster's add-on will do.
func sameUser(cn, user, cluster, addon string) bool {
	if user != "" {
		return cn == user
	}
	c, a, _, ok := clusteridentity.ParseAddOnUser(cn)
	return ok && c == cluster && a == addon
}

func wantUser(user, cluster, addon string) string {
	if user != "" {
		return strconv.Quote(user)
	}
	return strconv.Quote(clusteridentity.AddOnUser(cluster, addon, "<agent>"))
}

// sign issues a client certificate for req from the CA (PEM certificate and key, PKCS#8, PKCS#1
// or EC), valid for CustomSignerDuration from now.
func sign(req *x509.CertificateRequest, caCertPEM, caKeyPEM []byte, now time.Time) ([]byte, error) {
	cb, _ := pem.Decode(caCertPEM)
	kb, _ := pem.Decode(caKeyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("the Secret needs a PEM CA certificate in tls.crt and its key in tls.key")
	}
	ca, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	var key any
	if key, err = x509.ParsePKCS8PrivateKey(kb.Bytes); err != nil {
		if key, err = x509.ParsePKCS1PrivateKey(kb.Bytes); err != nil {
			if key, err = x509.ParseECPrivateKey(kb.Bytes); err != nil {
				return nil, errors.New("tls.key is not a PKCS#8, PKCS#1 or EC private key")
			}
		}
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("tls.key cannot sign")
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(CustomSignerDuration)
	if notAfter.After(ca.NotAfter) {
		notAfter = ca.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: req.Subject,
		NotBefore: now.Add(-5 * time.Minute), NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, req.PublicKey, signer)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
