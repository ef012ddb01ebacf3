package kubeconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestBuildRoundTrips(t *testing.T) {
	data, err := Build("hub", "https://127.0.0.1:6443", []byte("CA"), &clientcmdapi.AuthInfo{Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{cfg.Host, string(cfg.CAData), cfg.BearerToken}
	if diff := cmp.Diff([]string{"https://127.0.0.1:6443", "CA", "t"}, got); diff != "" {
		t.Errorf("kubeconfig read back (-want +got):\n%s", diff)
	}
}

func TestCA(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(file, []byte("from file"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		cfg     *rest.Config
		want    string
		wantErr bool
	}{
		"inline":       {cfg: &rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: []byte("inline"), CAFile: file}}, want: "inline"},
		"from a file":  {cfg: &rest.Config{TLSClientConfig: rest.TLSClientConfig{CAFile: file}}, want: "from file"},
		"none":         {cfg: &rest.Config{}, want: ""},
		"missing file": {cfg: &rest.Config{TLSClientConfig: rest.TLSClientConfig{CAFile: file + ".gone"}}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := CA(tc.cfg)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %t", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("CA (-want +got):\n%s", diff)
			}
		})
	}
}
