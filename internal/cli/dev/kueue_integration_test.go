//go:build integration

package dev_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/flotilla/flotilla/internal/local/devfleet"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// TestUpWithKueue: `dev up --with kueue` runs Kueue's manager on the hub and the spoke, status
// lists it, its webhooks suspend a queued Job, and down stops it with the fleet.
func TestUpWithKueue(t *testing.T) {
	if _, err := localk8s.FindKueue(); err != nil {
		t.Fatalf("%v", err)
	}
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	fleetFile := filepath.Join(dir, "fleet.yaml")
	if err := os.WriteFile(fleetFile, []byte(smallFleet), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _, _ = run(t, "dev", "down", "--state-dir", stateDir) })

	if _, _, err := run(t, "dev", "up", "-f", fleetFile, "--state-dir", stateDir, "--register=false", "--with", "volcano"); err == nil ||
		!strings.Contains(err.Error(), `--with[0]: Unsupported value: "volcano": supported values: "kueue"`) {
		t.Fatalf("dev up --with volcano: err = %v, want the flag, the value and the supported values", err)
	}
	out, progress, err := run(t, "dev", "up", "-f", fleetFile, "--state-dir", stateDir, "--register=false", "--with", "kueue")
	if err != nil {
		t.Fatalf("dev up --with kueue: %v\n%s", err, progress)
	}
	if !strings.Contains(out, "Kueue "+localk8s.KueueVersion+" on every cluster") {
		t.Errorf("dev up output does not mention Kueue:\n%s", out)
	}
	if !strings.Contains(progress, "Kueue "+localk8s.KueueVersion+" ready") {
		t.Errorf("dev up progress does not say Kueue is ready:\n%s", progress)
	}

	out, _, err = run(t, "dev", "status", "-o", "json", "--state-dir", stateDir)
	if err != nil {
		t.Fatalf("dev status: %v\n%s", err, out)
	}
	var r devfleet.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("dev status -o json printed no JSON: %v\n%s", err, out)
	}
	got := map[string]bool{}
	for _, c := range r.Clusters {
		for _, p := range c.Processes {
			if p.Component == localk8s.KueueBin {
				got[c.Name] = p.Running
			}
		}
	}
	if diff := cmp.Diff(map[string]bool{"hub": true, "spoke-a": true}, got); diff != "" {
		t.Errorf("Kueue processes running by cluster (-want +got):\n%s", diff)
	}
	if table, _, err := run(t, "dev", "status", "--state-dir", stateDir); err != nil || !strings.Contains(table, "KUEUE") || !strings.Contains(table, "pid ") {
		t.Errorf("dev status table does not show Kueue (err %v):\n%s", err, table)
	}

	// Kueue's webhook on the spoke suspends a Job that names a queue.
	st, err := devfleet.Load(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	spoke, err := st.Cluster("spoke-a")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := localk8s.RESTConfigFromKubeconfig(spoke.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "queued", Namespace: "default", Labels: map[string]string{"kueue.x-k8s.io/queue-name": "team"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "i"}},
		}}},
	}
	created, err := cs.BatchV1().Jobs("default").Create(context.Background(), job, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a queued Job on spoke-a: %v", err)
	}
	if !ptr.Deref(created.Spec.Suspend, false) {
		t.Errorf("Kueue's webhook did not suspend the queued Job on spoke-a")
	}

	if _, _, err := run(t, "dev", "down", "--state-dir", stateDir); err != nil {
		t.Fatalf("dev down: %v", err)
	}
	for _, p := range st.Processes {
		waitGone(t, p.PID)
	}
}
