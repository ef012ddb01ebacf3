//go:build integration

package registration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/cli"
	"github.com/flotilla/flotilla/internal/cli/streams"
	hubreg "github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func runCLI(args ...string) (string, error) {
	io, out, errOut := streams.Buffers()
	cmd := cli.NewRootCommand(io, clock.RealClock{})
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String() + errOut.String(), err
}

func TestJoinChecksTheHubAndStoresTheBootstrap(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 1, CRDs: true})
	ctx := context.Background()
	dir := t.TempDir()
	if err := hubreg.EnsureBootstrapIdentity(ctx, env.Hub.Client); err != nil {
		t.Fatal(err)
	}
	good, err := hubreg.BootstrapKubeconfig(ctx, env.Hub.Client, env.Hub.RESTConfig(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	goodFile := filepath.Join(dir, "bootstrap.kubeconfig")
	if err := os.WriteFile(goodFile, good, 0o600); err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range kc.AuthInfos {
		a.Token = "not-a-token"
	}
	badFile := filepath.Join(dir, "bad.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, badFile); err != nil {
		t.Fatal(err)
	}
	spoke := env.Spokes[0].Kubeconfig

	cases := map[string]struct {
		args    []string
		wantErr string
	}{
		"invalid cluster name": {
			args:    []string{"--cluster-name", "GPU_East", "--bootstrap-kubeconfig", goodFile, "--kubeconfig", spoke},
			wantErr: `--cluster-name "GPU_East" is not a valid cluster name`,
		},
		"missing bootstrap kubeconfig": {
			args:    []string{"--cluster-name", "joiner", "--bootstrap-kubeconfig", filepath.Join(dir, "nope"), "--kubeconfig", spoke},
			wantErr: "--bootstrap-kubeconfig",
		},
		"refused token": {
			args:    []string{"--cluster-name", "joiner", "--bootstrap-kubeconfig", badFile, "--kubeconfig", spoke},
			wantErr: "did not answer with the bootstrap kubeconfig",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := runCLI(append([]string{"join"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("flotilla join: err = %v, want one containing %q\n%s", err, tc.wantErr, out)
			}
		})
	}

	out, err := runCLI("join", "--cluster-name", "joiner", "--bootstrap-kubeconfig", goodFile, "--kubeconfig", spoke)
	if err != nil {
		t.Fatalf("flotilla join: %v\n%s", err, out)
	}
	cluster, cfg, err := agentreg.LoadBootstrap(ctx, env.Spokes[0].Client)
	if err != nil {
		t.Fatal(err)
	}
	if cluster != "joiner" || cfg.Host != env.Hub.Server {
		t.Errorf("stored bootstrap: cluster %q hub %q, want joiner and %s", cluster, cfg.Host, env.Hub.Server)
	}
}
