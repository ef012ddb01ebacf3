//go:build integration

package webhook

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/addon/v1beta1"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestV1beta1RegistrationsValidation: v1beta1 registrations that have no v1alpha1 meaning (two
// entries for one signer, a customSigner entry without its signer, the kube-apiserver client
// signer as a customSigner) are refused at v1beta1, naming the field; a good one is stored.
func TestV1beta1RegistrationsValidation(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	startHub(t, env)
	c := admin(t, env)
	ns := env.Namespace(t, env.Hub)
	waitForConversion(t, env, c, ns)
	ctx := context.Background()
	mca := &v1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "registrations"}}
	if err := c.Create(ctx, mca); err != nil {
		t.Fatal(err)
	}
	deleteAtEnd(t, c, mca)

	cases := map[string]struct {
		registrations string
		wantErr       string
	}{
		"two kubeClient entries": {
			registrations: `[{"type":"kubeClient"},{"type":"kubeClient","kubeClient":{"driver":"csr"}}]`,
			wantErr:       "status.registrations registers a signer twice",
		},
		"two entries of one custom signer": {
			registrations: `[{"type":"customSigner","customSigner":{"signerName":"example.com/a"}},{"type":"customSigner","customSigner":{"signerName":"example.com/a"}}]`,
			wantErr:       "status.registrations registers a signer twice",
		},
		"customSigner without its signer": {
			registrations: `[{"type":"customSigner"}]`,
			wantErr:       "an entry of type customSigner needs customSigner.signerName",
		},
		"the kube-apiserver client signer as a customSigner": {
			registrations: `[{"type":"customSigner","customSigner":{"signerName":"kubernetes.io/kube-apiserver-client"}}]`,
			wantErr:       "is registered with type kubeClient",
		},
		"one kubeClient and two custom signers": {
			registrations: `[{"type":"kubeClient","kubeClient":{"driver":"token"}},` +
				`{"type":"customSigner","customSigner":{"signerName":"example.com/a"}},{"type":"customSigner","customSigner":{"signerName":"example.com/b"}}]`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			patch := []byte(`{"status":{"registrations":` + tc.registrations + `}}`)
			beta := &v1beta1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: mca.Name}}
			err := c.Status().Patch(ctx, beta, client.RawPatch(types.MergePatchType, patch))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("got %v, want an error saying %q", err, tc.wantErr)
			}
		})
	}
	// The accepted one is stored as v1alpha1 says it.
	got := &v1alpha1.ManagedClusterAddOn{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(mca), got); err != nil {
		t.Fatal(err)
	}
	var signers []string
	for _, r := range got.Status.Registrations {
		signers = append(signers, r.SignerName)
	}
	if want := "kubernetes.io/kube-apiserver-client example.com/a example.com/b"; strings.Join(signers, " ") != want || got.Status.KubeClientDriver != "token" {
		t.Errorf("stored registrations %v, driver %q; want %s, token", signers, got.Status.KubeClientDriver, want)
	}
}
