package explain

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
)

func TestViaHub(t *testing.T) {
	// A stand-in for the hub's explanation server: it answers the path of ml/gpu for the token
	// "good", refuses other tokens as the real server does.
	var gotPath string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath = r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer good" {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"user \"bob\" cannot get placements","code":403}`))
			return
		}
		_, _ = w.Write([]byte(`{"placement":{"namespace":"ml","name":"gpu"},"decisions":[],"clusters":[],"conditions":[]}`))
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	cases := map[string]struct {
		token    string
		args     []string
		wantOut  string
		wantErr  string
		wantPath string
	}{
		"json from the hub": {
			token: "good", args: []string{"ml/gpu", "-o", "json", "--via-hub", srv.URL, "--via-hub-ca", ca},
			wantOut:  "{\n  \"placement\": {\n    \"namespace\": \"ml\",\n    \"name\": \"gpu\"\n  },\n  \"decisions\": [],\n  \"clusters\": [],\n  \"conditions\": []\n}\n",
			wantPath: "/explain/namespaces/ml/placements/gpu",
		},
		"the context's namespace": {
			token: "good", args: []string{"gpu", "-o", "json", "--via-hub", srv.URL + "/", "--via-hub-ca", ca},
			wantOut:  "{\n  \"placement\": {\n    \"namespace\": \"ml\",\n    \"name\": \"gpu\"\n  },\n  \"decisions\": [],\n  \"clusters\": [],\n  \"conditions\": []\n}\n",
			wantPath: "/explain/namespaces/ml/placements/gpu",
		},
		"refused": {
			token: "bad", args: []string{"ml/gpu", "-o", "json", "--via-hub", srv.URL, "--via-hub-ca", ca},
			wantErr:  `answered 403: user "bob" cannot get placements`,
			wantPath: "/explain/namespaces/ml/placements/gpu",
		},
		"untrusted certificate": {
			token: "good", args: []string{"ml/gpu", "-o", "json", "--via-hub", srv.URL},
			wantErr: "check --via-hub and --via-hub-ca",
		},
		"no token": {
			args:    []string{"ml/gpu", "-o", "json", "--via-hub", srv.URL, "--via-hub-ca", ca},
			wantErr: "kubeconfig hub.kubeconfig has no bearer token",
		},
		"table": {
			token: "good", args: []string{"ml/gpu", "--via-hub", srv.URL},
			wantErr: "--via-hub prints the hub's JSON answer only: add -o json",
		},
		"not https": {
			token: "good", args: []string{"ml/gpu", "-o", "json", "--via-hub", "http://127.0.0.1:9444"},
			wantErr: "give the explanation server's https://HOST:PORT",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			gotPath = ""
			newClient := func(kube kubeflags.Flags) (client.Reader, *kubeflags.Loaded, error) {
				c := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
				return c, &kubeflags.Loaded{Config: &rest.Config{Host: "https://api.invalid", BearerToken: tc.token},
					Namespace: contextNamespace, Source: "hub.kubeconfig"}, nil
			}
			io, out, _ := streams.Buffers()
			root := &cobra.Command{Use: "flotilla", SilenceUsage: true, SilenceErrors: true}
			root.AddCommand(newCommand(io, clocktesting.NewFakePassiveClock(now), newClient))
			root.SetArgs(append([]string{"explain", "placement"}, tc.args...))
			err := root.ExecuteContext(context.Background())
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one holding %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantOut, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if gotPath != tc.wantPath {
				t.Errorf("path %q, want %q", gotPath, tc.wantPath)
			}
		})
	}
}
