package policytemplate

import (
	"context"
	"testing"
)

// FuzzResolve feeds policy authors' templates (untrusted input on the hub and the clusters) to
// Resolve: it may fail, never panic, and never read outside the namespace it is confined to.
func FuzzResolve(f *testing.F) {
	for _, seed := range []string{
		`{"a":"{{hub fromConfigMap \"\" \"settings\" \"region\" hub}}"}`,
		`{"a":"{{ fromConfigMap \"team-a\" \"settings\" \"replicas\" | toInt }}"}`,
		`{"a":"{{hub (lookup \"v1\" \"ConfigMap\" \"other\" \"\").items hub}}"}`,
		`{"a":"{{ copySecretData \"team-a\" \"db\" }}"}`,
		`{"a":"{{hub range $i, $e := until 3 hub}}x{{hub end hub}}"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		src := fixture()
		_, _ = Resolve(context.Background(), raw, Options{Delims: Hub, Namespace: "team-a", Source: src})
		for _, key := range src.read {
			if !hasNS(key, "team-a") {
				t.Fatalf("read %s outside team-a", key)
			}
		}
	})
}

// hasNS reports whether key (kind/namespace/name) is in ns.
func hasNS(key, ns string) bool {
	first := -1
	for i := range key {
		if key[i] == '/' {
			if first < 0 {
				first = i
				continue
			}
			return key[first+1:i] == ns
		}
	}
	return false
}
