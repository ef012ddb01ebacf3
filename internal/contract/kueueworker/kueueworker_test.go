package kueueworker

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
)

func TestFromSecret(t *testing.T) {
	full := map[string][]byte{TokenKey: []byte("t"), CAKey: []byte("ca"), ServerKey: []byte("https://127.0.0.1:6443")}
	without := func(key string) map[string][]byte {
		out := map[string][]byte{}
		for k, v := range full {
			if k != key {
				out[k] = v
			}
		}
		return out
	}
	cases := map[string]struct {
		data    map[string][]byte
		want    Token
		wantErr string
	}{
		"reported":  {data: full, want: Token{Token: "t", Server: "https://127.0.0.1:6443", CA: []byte("ca")}},
		"not yet":   {data: nil, wantErr: "the token Secret kueue-system/multikueue-token.a has no key token"},
		"no CA":     {data: without(CAKey), wantErr: "the token Secret kueue-system/multikueue-token.a has no key ca.crt"},
		"no server": {data: without(ServerKey), wantErr: "the token Secret kueue-system/multikueue-token.a has no key server"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kueue-system", Name: TokenSecret("a")}, Data: tc.data}
			got, err := FromSecret(s)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tc.wantErr {
				t.Fatalf("error %q, want %q", gotErr, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("token (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKubeconfigIsWhatKueueAccepts: an inline token and CA, no files, TLS verified.
func TestKubeconfigIsWhatKueueAccepts(t *testing.T) {
	data, err := Kubeconfig("gpu-east", "https://127.0.0.1:6443", []byte("ca-pem"), "tok")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	c, u := cfg.Clusters["gpu-east"], cfg.AuthInfos["gpu-east"]
	if c == nil || u == nil {
		t.Fatalf("no cluster or user gpu-east in %s", data)
	}
	got := []string{c.Server, string(c.CertificateAuthorityData), c.CertificateAuthority, u.Token, u.TokenFile}
	if diff := cmp.Diff([]string{"https://127.0.0.1:6443", "ca-pem", "", "tok", ""}, got); diff != "" {
		t.Errorf("kubeconfig (-want +got):\n%s", diff)
	}
	if c.InsecureSkipTLSVerify {
		t.Error("the kubeconfig skips TLS verification")
	}
}

// TestRulesGrantNoSecretsOrRBAC keeps the worker's role to what MultiKueue needs.
func TestRulesGrantNoSecretsOrRBAC(t *testing.T) {
	for _, r := range Rules() {
		for _, g := range r.APIGroups {
			if g == rbacv1.GroupName || g == "*" {
				t.Errorf("rule %v grants RBAC or everything", r)
			}
		}
		for _, res := range r.Resources {
			switch res {
			case "secrets", "nodes", "serviceaccounts/token", "*":
				t.Errorf("rule %v grants %s", r, res)
			}
		}
	}
	var binding *rbacv1.ClusterRoleBinding
	for _, o := range Manifests() {
		if b, ok := o.(*rbacv1.ClusterRoleBinding); ok {
			binding = b
		}
	}
	want := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: Namespace, Name: ServiceAccount}}
	if binding == nil {
		t.Fatal("no ClusterRoleBinding among the manifests")
	}
	if diff := cmp.Diff(want, binding.Subjects); diff != "" || binding.RoleRef.Name != ClusterRoleName {
		t.Errorf("binding subjects (-want +got):\n%s, role %s", diff, binding.RoleRef.Name)
	}
}

func TestFromSecretRefusesWhatNoKubeconfigCarries(t *testing.T) {
	for name, data := range map[string]map[string][]byte{
		"invalid UTF-8 token":   {TokenKey: []byte("\xcc"), CAKey: []byte("0"), ServerKey: []byte("0")},
		"token with a space":    {TokenKey: []byte("a b"), CAKey: []byte("ca"), ServerKey: []byte("https://a")},
		"token with a newline":  {TokenKey: []byte("t\nusers: []"), CAKey: []byte("ca"), ServerKey: []byte("https://a")},
		"invalid UTF-8 server":  {TokenKey: []byte("t"), CAKey: []byte("ca"), ServerKey: []byte("https://\xff")},
		"server with a control": {TokenKey: []byte("t"), CAKey: []byte("ca"), ServerKey: []byte("https://a\r\n")},
	} {
		t.Run(name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kueue-system", Name: "multikueue-token.a"}, Data: data}
			if tok, err := FromSecret(s); err == nil {
				t.Errorf("FromSecret() = %+v, want an error", tok)
			}
		})
	}
}
