//go:build integration

package localk8s

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
)

// busyPorts makes freePort hand out a port another listener holds for the first n calls.
func busyPorts(t *testing.T, n int) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	busy := l.Addr().(*net.TCPAddr).Port
	calls := 0
	freePort = func() (int, error) {
		calls++
		if calls <= n {
			return busy, nil
		}
		return kernelFreePort()
	}
	t.Cleanup(func() { freePort = kernelFreePort })
}

func TestEtcdRetriesOnBusyPort(t *testing.T) {
	bins, err := FindBinaries()
	if err != nil {
		t.Fatal(err)
	}
	busyPorts(t, 1) // the first client port is taken
	e, err := StartEtcd(context.Background(), EtcdOptions{Name: "etcd-busy", Dir: t.TempDir(), Binaries: bins})
	if err != nil {
		t.Fatalf("StartEtcd did not recover from a busy port: %v", err)
	}
	defer e.Stop()
	if err := httpOK(context.Background(), http.DefaultClient, e.URL+"/health"); err != nil {
		t.Errorf("etcd started on a second port is not healthy: %v", err)
	}
}

func TestBusyPortIsReportedWithLogTail(t *testing.T) {
	bins, err := FindBinaries()
	if err != nil {
		t.Fatal(err)
	}
	busyPorts(t, 1000) // every port it is given is taken
	_, err = StartEtcd(context.Background(), EtcdOptions{Name: "etcd-busy", Dir: t.TempDir(), Binaries: bins})
	if err == nil {
		t.Fatal("StartEtcd succeeded on a busy port")
	}
	for _, want := range []string{"etcd-busy", "address already in use", "last lines of"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}
