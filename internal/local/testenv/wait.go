package testenv

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// WaitFor polls cond every 200 ms until it reports done, failing the test after timeout with what
// was awaited and cond's last report of the state it saw.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (done bool, state string, err error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var state string
	var lastErr error
	for {
		done, s, err := cond(ctx)
		if err == nil && done {
			return
		}
		state, lastErr = s, err
		select {
		case <-ctx.Done():
			if lastErr != nil {
				t.Fatalf("timed out after %s waiting for %s; last error: %v; last state: %s", timeout, what, lastErr, state)
			}
			t.Fatalf("timed out after %s waiting for %s; last state: %s", timeout, what, state)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// AddNodes creates a pool of simulated nodes on c, deletes them when the test ends, and waits
// until every node is Ready and schedulable (kwok marks it Ready; kube-controller-manager then
// lifts the not-ready taint).
func (e *Env) AddNodes(t testing.TB, c *Cluster, pool localk8s.NodePool) {
	t.Helper()
	ctx := context.Background()
	if err := localk8s.CreateNodes(ctx, c.Client, pool); err != nil {
		t.Fatalf("adding nodes to %s: %v", c.Name, err)
	}
	nodes := pool.Nodes()
	t.Cleanup(func() {
		for _, n := range nodes {
			_ = c.Client.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{})
		}
	})
	for _, n := range nodes {
		WaitFor(t, 60*time.Second, "node "+c.Name+"/"+n.Name+" to be Ready without taints", func(ctx context.Context) (bool, string, error) {
			got, err := c.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			return localk8s.NodeSchedulable(got), describeNode(got), nil
		})
	}
}

func describeNode(n *corev1.Node) string {
	ready := "no Ready condition"
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = "Ready=" + string(c.Status)
		}
	}
	var taints []string
	for _, tn := range n.Spec.Taints {
		taints = append(taints, tn.ToString())
	}
	return ready + ", taints=[" + strings.Join(taints, " ") + "]"
}
