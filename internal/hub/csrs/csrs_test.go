package csrs

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/flotilla/flotilla/api/scheme"
)

func request(name string, labels map[string]string, conds ...certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequest {
	csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	for _, c := range conds {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: c})
	}
	return csr
}

func TestDecided(t *testing.T) {
	cases := map[string]struct {
		conds []certificatesv1.RequestConditionType
		want  bool
	}{
		"new":      {},
		"approved": {conds: []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved}, want: true},
		"denied":   {conds: []certificatesv1.RequestConditionType{certificatesv1.CertificateDenied}, want: true},
		"failed":   {conds: []certificatesv1.RequestConditionType{certificatesv1.CertificateFailed}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Decided(request("r", nil, tc.conds...))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPending(t *testing.T) {
	east := map[string]string{"cluster": "east"}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(
		request("east-new", east), request("east-approved", east, certificatesv1.CertificateApproved),
		request("west-new", map[string]string{"cluster": "west"}),
	).Build()
	got, err := Pending(context.Background(), c, client.MatchingLabels(east))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range got {
		names = append(names, r.Name)
	}
	if diff := cmp.Diff([]string{"east-new"}, names); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
}
