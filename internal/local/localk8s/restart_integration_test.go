//go:build integration

package localk8s_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestAPIServerRestartKeepsAddressCertificatesAndData(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx := context.Background()
	// A cluster of its own on the fleet's etcd, so that stopping it leaves the shared fleet alone.
	c, err := localk8s.StartCluster(ctx, localk8s.ClusterOptions{
		Name: "restart", Dir: t.TempDir(), Binaries: env.Binaries, EtcdURL: env.Fleet.Etcds[0].URL, APIServerOnly: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "survives", Namespace: "default"}, Data: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	server, pid := c.Server, c.APIServer.PID()

	if err := c.StartAPIServer(ctx); err == nil || !strings.Contains(err.Error(), "is running") {
		t.Errorf("starting a running API server: err = %v, want one saying it is running", err)
	}
	c.StopAPIServer()
	if err := c.Ready(ctx); err == nil {
		t.Fatal("the API server is ready after StopAPIServer")
	}
	if err := c.Check(); err == nil || !strings.Contains(err.Error(), "restart/kube-apiserver") {
		t.Errorf("Check on a stopped API server = %v, want it named", err)
	}

	if err := c.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Server != server {
		t.Errorf("the API server came back at %s, want %s", c.Server, server)
	}
	if c.APIServer.PID() == pid {
		t.Errorf("the API server has the pid %d it had before the restart", pid)
	}
	if err := c.Check(); err != nil {
		t.Errorf("Check after the restart: %v", err)
	}
	// The client made before the restart still works: same address, same CA, same admin certificate.
	got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "survives", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the ConfigMap after the restart: %v", err)
	}
	if got.Data["k"] != "v" {
		t.Errorf("the ConfigMap after the restart has data %v, want k=v", got.Data)
	}
}
