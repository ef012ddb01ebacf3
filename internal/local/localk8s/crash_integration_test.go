//go:build integration

package localk8s_test

import (
	"context"
	"strings"
	"testing"

	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestCrashedAPIServerIsReported(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	// A cluster of its own on the fleet's etcd, so that crashing it leaves the shared fleet alone.
	c, err := localk8s.StartCluster(context.Background(), localk8s.ClusterOptions{
		Name: "crash", Dir: t.TempDir(), Binaries: env.Binaries, EtcdURL: env.Fleet.Etcds[0].URL,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if err := c.Check(); err != nil {
		t.Fatalf("a fresh cluster reports a problem: %v", err)
	}
	c.APIServer.Kill()
	err = c.Check()
	if err == nil {
		t.Fatal("Check reports nothing after the API server was killed")
	}
	for _, want := range []string{"crash/kube-apiserver", "signal: killed", "last lines of", "kube-apiserver.log", "  | "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("crash report does not mention %q:\n%v", want, err)
		}
	}
}

func TestMissingBinaryIsReported(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	_, err := localk8s.StartCluster(context.Background(), localk8s.ClusterOptions{
		Name: "nobin", Dir: t.TempDir(), Binaries: localk8s.Binaries{Dir: t.TempDir()}, EtcdURL: env.Fleet.Etcds[0].URL,
	})
	if err == nil || !strings.Contains(err.Error(), "kube-apiserver") || !strings.Contains(err.Error(), "make k8s-bin") {
		t.Errorf("starting with no binaries: err = %v, want one naming kube-apiserver and `make k8s-bin`", err)
	}
}
