package mcpserver

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestHubError(t *testing.T) {
	gr := schema.GroupResource{Group: "cluster.open-cluster-management.io", Resource: "placements"}
	cases := map[string]struct {
		err  error
		want []string
	}{
		"forbidden": {err: apierrors.NewForbidden(gr, "p", errors.New(`User "bob" cannot get`)),
			want: []string{"permission denied reading p:", `User "bob" cannot get`, "--kubeconfig"}},
		"unauthorized": {err: apierrors.NewUnauthorized("token expired"),
			want: []string{"did not accept the kubeconfig's credentials", "token expired"}},
		"not found, with its fix": {err: apierrors.NewNotFound(gr, "p"),
			want: []string{"reading p: not found on the hub", "list them"}},
		"no such kind": {err: &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "x", Kind: "Y"}},
			want: []string{"does not serve this kind", "flotilla install crds"}},
		"a strict decoding error without the object": {
			err:  apierrors.NewBadRequest(`patch: Invalid value: "{\"metadata\":{\"managedFields\":[]}}": strict decoding error: unknown field "spec.x"`),
			want: []string{`refused it as invalid: strict decoding error: unknown field "spec.x"; fix`}},
		"other errors are wrapped": {err: errors.New("connection refused"),
			want: []string{"reading p: connection refused"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := hubError(tc.err, "reading p", "list them").Error()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("hubError = %q, does not hold %q", got, w)
				}
			}
			if strings.Contains(got, "managedFields") {
				t.Errorf("hubError = %q quotes the object", got)
			}
		})
	}
}
