package apitest

import (
	"os"
	"testing"

	"sigs.k8s.io/yaml"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

// ReadPolicy reads the Policy in the YAML file path (strictly: an unknown field fails the test)
// and puts it in namespace ns: a policy kept as a user writes it, such as OCM's
// policy-collection's in test/policy/testdata.
func ReadPolicy(t testing.TB, path, ns string) *policyv1.Policy {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := &policyv1.Policy{}
	if err := yaml.UnmarshalStrict(b, p); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	p.Namespace = ns
	return p
}
