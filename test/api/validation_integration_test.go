//go:build integration

package api

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla/flotilla/internal/local/testenv"
)

// validationCase is an object the API server must refuse, with the messages the refusal must
// hold, and its good twin, which differs only in the one thing that makes it right and must be
// accepted. Objects may carry a status: it is written through the status subresource, so status
// validation is tested too.
type validationCase struct {
	bad     string
	wantErr []string
	good    string
}

// validationCases collects every group's cases by name ("<Kind>: <what is wrong>"); each group's
// file adds its own in an init function.
var validationCases = map[string]validationCase{}

func addValidationCases(cases map[string]validationCase) {
	for name, c := range cases {
		if _, dup := validationCases[name]; dup {
			panic("two validation cases are named " + name)
		}
		validationCases[name] = c
	}
}

func TestValidation(t *testing.T) {
	dc, mapper := clients(t)
	env := testenv.Start(t, testenv.Options{CRDs: true})
	ns := env.Namespace(t, env.Hub)
	for name, tc := range validationCases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			bad := parse(t, name+" (bad)", tc.bad)
			r := resourceFor(t, dc, mapper, bad, ns)
			if _, err := create(ctx, r, bad); err == nil {
				_ = r.Delete(ctx, bad.GetName(), metav1.DeleteOptions{})
				t.Errorf("the API server accepted the bad object")
			} else {
				for _, want := range tc.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("refusal does not say %q:\n%v", want, err)
					}
				}
			}
			good := parse(t, name+" (good)", tc.good)
			r = resourceFor(t, dc, mapper, good, ns)
			if _, err := create(ctx, r, good); err != nil {
				t.Errorf("the API server refused the good twin: %v", err)
				return
			}
			if err := r.Delete(ctx, good.GetName(), metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting the good twin: %v", err)
			}
		})
	}
}
