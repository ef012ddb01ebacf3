package credentialsplugin

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzClusterName feeds clusterName arbitrary KUBERNETES_EXEC_INFO: whatever the consumer's
// process environment holds, it must not panic, and a name it returns is a DNS label (never a
// path or another namespace's name).
func FuzzClusterName(f *testing.F) {
	f.Add(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"cluster":{"config":{"clusterName":"gpu-east"}}}}`)
	f.Add(`{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","spec":{"cluster":{"config":null}}}`)
	f.Add(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"cluster":{"config":{"clusterName":"a/b"}}}}`)
	f.Add(``)
	f.Fuzz(func(t *testing.T, raw string) {
		name, version, err := clusterName(raw)
		if err != nil {
			if name != "" || version != "" {
				t.Fatalf("an error (%v) with a name %q or version %q", err, name, version)
			}
			return
		}
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 || !strings.HasPrefix(version, "client.authentication.k8s.io/") {
			t.Fatalf("accepted name %q (%v), version %q", name, errs, version)
		}
	})
}
