package registration

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"github.com/flotilla/flotilla/internal/logtest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

func TestDecideCert(t *testing.T) {
	now := time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)
	valid := func(from, to time.Duration) *credentials {
		return &credentials{cert: &x509.Certificate{NotBefore: now.Add(from), NotAfter: now.Add(to)}}
	}
	refusal := errors.New("401")
	tests := map[string]struct {
		creds    *credentials
		refused  error
		want     certAction
		wantWait time.Duration
		wantWhy  string
	}{
		"no credentials":                        {want: certRegister},
		"fresh: wait until 80% of the lifetime": {creds: valid(-time.Minute, 9*time.Minute), want: certWait, wantWait: 7 * time.Minute},
		"at 80% of the lifetime":                {creds: valid(-8*time.Minute, 2*time.Minute), want: certRenew},
		"past 80% of the lifetime":              {creds: valid(-9*time.Minute, time.Minute), want: certRenew},
		"refused by the hub while fresh":        {creds: valid(-time.Minute, 9*time.Minute), refused: refusal, want: certFallBack, wantWhy: "401"},
		"expired this instant": {
			creds: valid(-10*time.Minute, 0), want: certFallBack, wantWhy: "the hub client certificate expired at 2030-01-02T12:00:00Z",
		},
		"expired long ago": {
			creds: valid(-time.Hour, -50*time.Minute), want: certFallBack, wantWhy: "the hub client certificate expired at 2030-01-02T11:10:00Z",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, wait, why := decideCert(tc.creds, tc.refused, now)
			gotWhy := ""
			if why != nil {
				gotWhy = why.Error()
			}
			if diff := cmp.Diff([]any{tc.want, tc.wantWait, tc.wantWhy}, []any{got, wait, gotWhy}); diff != "" {
				t.Errorf("decideCert (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckRequest(t *testing.T) {
	ca := newTestCA(t)
	now := time.Now()
	tests := map[string]struct {
		mode csrMode
		// at is when the agent looks, from the filing; the deadline is a minute after it.
		at           time.Duration
		wantIssued   bool
		wantErr      string
		wantEndsWait bool
	}{
		"signed":                             {mode: csrSign, wantIssued: true},
		"pending":                            {mode: csrPending, at: 59 * time.Second},
		"pending at the deadline":            {mode: csrPending, at: time.Minute, wantErr: "certificate request gpu-east-1 was not signed within 1m0s", wantEndsWait: true},
		"signed after the deadline is taken": {mode: csrSign, at: time.Hour, wantIssued: true},
		"denied":                             {mode: csrDeny, wantErr: "certificate request gpu-east-1 was Denied: not today", wantEndsWait: true},
		"deleted":                            {mode: csrGone, wantErr: "certificate request gpu-east-1 was deleted before it was signed", wantEndsWait: true},
		"credentials refused":                {mode: csrUnauthorized, wantErr: "reading certificate request gpu-east-1: Unauthorized", wantEndsWait: true},
		"hub trouble before the deadline": {
			mode: csrFlaky, at: 30 * time.Second, wantErr: "reading certificate request gpu-east-1: Internal error occurred: etcd is slow",
		},
		"hub trouble at the deadline": {
			mode: csrFlaky, at: time.Minute, wantEndsWait: true,
			wantErr: "certificate request gpu-east-1 was not signed within 1m0s (last error reading it: Internal error occurred: etcd is slow)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			hub := newFakeCSRs(t, ca, tc.mode)
			p, err := fileRequest(context.Background(), hub, "gpu-east", "a1", 0, now, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			issued, err := CheckRequest(context.Background(), hub, p, now.Add(tc.at))
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff([]any{tc.wantIssued, tc.wantErr, tc.wantEndsWait}, []any{issued != nil, gotErr, err != nil && EndsWait(err)}); diff != "" {
				t.Errorf("checkRequest: issued, error, ends the wait (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRenewal runs the client certificate loop's step with credentials due for renewal against a
// hub that treats the renewal request as its mode says.
func TestRenewal(t *testing.T) {
	ca := newTestCA(t)
	tests := map[string]struct {
		mode csrMode
		// wantErr is in the explanation of the step's error; empty for none.
		wantErr     string
		wantRenewed bool
		// wantRefused: the hub's refusal is recorded, so the next step falls back.
		wantRefused bool
		// wantMinDuration is the least the step takes (the bounded wait).
		wantMinDuration time.Duration
	}{
		"approved":         {mode: csrSign, wantRenewed: true},
		"denied":           {mode: csrDeny, wantErr: "certificate request gpu-east-1 of cluster gpu-east was denied (not today): the agent asks again"},
		"deleted (404)":    {mode: csrGone, wantErr: "certificate request gpu-east-1 of cluster gpu-east was deleted before it was signed: the agent asks again"},
		"refused (401)":    {mode: csrUnauthorized, wantErr: "refused the agent's client certificate", wantRefused: true},
		"never approved":   {mode: csrPending, wantErr: "the hub did not sign renewal request gpu-east-1 of cluster gpu-east within 200ms", wantMinDuration: 200 * time.Millisecond},
		"hub does not say": {mode: csrFlaky, wantErr: "the hub did not sign renewal request gpu-east-1 of cluster gpu-east within 200ms", wantMinDuration: 200 * time.Millisecond},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			logs := &logtest.Recorder{}
			a, spoke := testAgent(t, ca, newFakeCSRs(t, ca, csrPending), logs, clock.RealClock{})
			hub := newFakeCSRs(t, ca, tc.mode)
			now := time.Now()
			cur := hubClientsWith(t, ca.creds(t, now.Add(-9*time.Minute), now.Add(time.Minute)), hub)
			a.hub.set(cur)
			l := &certLoop{a: a}

			start := time.Now()
			_, err := l.step(context.Background())
			took := time.Since(start)
			if got := explain(err); !strings.Contains(got, tc.wantErr) || (tc.wantErr == "") != (err == nil) {
				t.Errorf("step error %v explained as %q, want one explained with %q", err, got, tc.wantErr)
			}
			if took < tc.wantMinDuration {
				t.Errorf("step took %s, want at least %s", took, tc.wantMinDuration)
			}
			if n := hub.created.Load(); n != 1 {
				t.Errorf("%d renewal requests, want 1", n)
			}
			renewed := a.hub.Current() != cur
			if renewed != tc.wantRenewed {
				t.Errorf("renewed = %v, want %v", renewed, tc.wantRenewed)
			}
			if got := a.hub.Current(); got == nil {
				t.Fatal("no credentials after the step: a failed renewal must keep the current ones")
			}
			if refused := a.hub.refusal(cur) != nil; refused != tc.wantRefused {
				t.Errorf("refusal recorded = %v, want %v", refused, tc.wantRefused)
			}
			stored, _, err := loadCredentials(context.Background(), spoke, a.opts.Namespace, a.opts.SecretName, "gpu-east", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantRenewed && (stored == nil || string(stored.kubeconfig) != string(a.hub.Current().creds.kubeconfig)) {
				t.Errorf("the renewed credentials are not stored in the Secret")
			}
			if tc.wantRenewed && !a.hub.Current().NotAfter.After(cur.NotAfter) {
				t.Errorf("renewed certificate expires at %s, not after the old one's %s", a.hub.Current().NotAfter, cur.NotAfter)
			}
		})
	}
}

// TestTransientErrorsWhileWaitingAreLoggedOnce: a hub that answers 500 at every poll of a
// pending request is reported once, not at every poll.
func TestTransientErrorsWhileWaitingAreLoggedOnce(t *testing.T) {
	ca := newTestCA(t)
	logs := &logtest.Recorder{}
	bootstrap := newFakeCSRs(t, ca, csrFlaky)
	a, _ := testAgent(t, ca, bootstrap, logs, clock.RealClock{})
	l := &certLoop{a: a}
	if _, err := l.step(context.Background()); err != nil {
		t.Fatalf("step: %v (a request not signed in time is asked again at once, not a failure)", err)
	}
	if n := len(logs.Find("answered 500 InternalError to wait for certificate request gpu-east-1")); n != 1 {
		t.Errorf("%d log entries for the hub's 500s while waiting, want 1; log: %v", n, logs.Find(""))
	}
	if n := len(logs.Find("certificate request gpu-east-1 of cluster gpu-east was not signed within 200ms")); n != 1 {
		t.Errorf("%d log entries for the timeout, want 1; log: %v", n, logs.Find(""))
	}
}

// TestFallBack: credentials the hub refused (401) or that expired are dropped, and the agent
// registers again with the bootstrap identity, without loading them again from the Secret.
func TestFallBack(t *testing.T) {
	ca := newTestCA(t)
	tests := map[string]struct {
		// prepare makes the current credentials unusable.
		prepare func(a *Agent, cur *HubClients)
		from    time.Duration
		to      time.Duration
		wantLog string
	}{
		"refused by another loop": {
			prepare: func(a *Agent, cur *HubClients) {
				_ = a.hubErr(cur, "renew Lease gpu-east/managed-cluster-lease", apierrors.NewUnauthorized("Unauthorized"))
			},
			from: -time.Minute, to: 9 * time.Minute,
			wantLog: "refused the agent's client certificate from Secret open-cluster-management-agent/hub-kubeconfig-secret on the spoke (401)",
		},
		"expired": {
			from: -20 * time.Minute, to: -10 * time.Minute,
			wantLog: "before it could be renewed: the agent registers again with the bootstrap kubeconfig",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			logs := &logtest.Recorder{}
			bootstrap := newFakeCSRs(t, ca, csrSign)
			a, spoke := testAgent(t, ca, bootstrap, logs, clock.RealClock{})
			now := time.Now()
			old := ca.creds(t, now.Add(tc.from), now.Add(tc.to))
			if err := saveCredentials(context.Background(), spoke, a.opts.Namespace, a.opts.SecretName, "gpu-east", "a1", old); err != nil {
				t.Fatal(err)
			}
			cur := hubClientsWith(t, old, newFakeCSRs(t, ca, csrSign))
			a.hub.set(cur)
			if tc.prepare != nil {
				tc.prepare(a, cur)
			}
			l := &certLoop{a: a}

			if _, err := l.step(context.Background()); err != nil {
				t.Fatalf("falling back: %v", err)
			}
			if a.hub.Current() != nil {
				t.Fatal("the unusable credentials are still in use")
			}
			if got := logs.Find(tc.wantLog); len(got) != 1 || got[0]["next"] != "registering again with the bootstrap kubeconfig" {
				t.Errorf("log entries with %q: %v, want one saying the agent registers again; log: %v", tc.wantLog, got, logs.Find(""))
			}
			spoke.ClearActions()

			if _, err := l.step(context.Background()); err != nil {
				t.Fatalf("registering again: %v", err)
			}
			if n := bootstrap.created.Load(); n != 1 {
				t.Errorf("%d certificate requests with the bootstrap identity, want 1", n)
			}
			for _, act := range spoke.Actions() {
				if act.GetVerb() == "get" && act.GetResource().Resource == "secrets" {
					t.Errorf("the agent read the Secret with the unusable credentials again")
				}
			}
			if a.hub.Current() == nil || a.hub.Current().creds == old {
				t.Fatal("no new credentials after registering again")
			}
			reg := logs.Find("registering with the hub")
			if len(reg) != 1 || !strings.Contains(fmt.Sprint(reg[0]["reason"]), tc.wantLog) {
				t.Errorf("registering log entries %v, want one whose reason says %q", reg, tc.wantLog)
			}
		})
	}
}

// TestFirstRequest: the first registration waits for approval at most ApprovalTimeout and then
// asks again at once; a deleted or denied request fails the step (the runner backs off) and the
// next step asks again.
func TestFirstRequest(t *testing.T) {
	ca := newTestCA(t)
	tests := map[string]struct {
		mode    csrMode
		wantErr string
		wantLog string
	}{
		"never approved": {mode: csrPending, wantLog: "certificate request gpu-east-1 of cluster gpu-east was not signed within 200ms: the agent asks again; approve it with `flotilla accept gpu-east` on the hub"},
		"deleted":        {mode: csrGone, wantErr: "certificate request gpu-east-1 of cluster gpu-east was deleted before it was signed: the agent asks again; approve it with `flotilla accept gpu-east` on the hub"},
		"denied":         {mode: csrDeny, wantErr: "certificate request gpu-east-1 of cluster gpu-east was denied (not today): the agent asks again; approve it with `flotilla accept gpu-east` on the hub"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			logs := &logtest.Recorder{}
			bootstrap := newFakeCSRs(t, ca, tc.mode)
			a, _ := testAgent(t, ca, bootstrap, logs, clock.RealClock{})
			l := &certLoop{a: a}
			_, err := l.step(context.Background())
			if got := explain(err); got != tc.wantErr {
				t.Errorf("step error explained as %q, want %q", got, tc.wantErr)
			}
			if tc.wantLog != "" && len(logs.Find(tc.wantLog)) != 1 {
				t.Errorf("no log entry %q; log: %v", tc.wantLog, logs.Find(""))
			}
			bootstrap.setMode(csrSign)
			if _, err := l.step(context.Background()); err != nil {
				t.Fatalf("the next step: %v", err)
			}
			if n := bootstrap.created.Load(); n != 2 {
				t.Errorf("%d certificate requests, want 2: the agent asks again", n)
			}
			if a.hub.Current() == nil {
				t.Errorf("no credentials once the second request was signed")
			}
		})
	}
}

func TestDesiredStatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC))
	mc := testCluster()
	mc.Generation = 3
	mc.Status.Version.Kubernetes = "v1.36.0"
	available := metav1.Condition{Type: "ManagedClusterConditionAvailable", Status: metav1.ConditionFalse, Reason: "ManagedClusterKubeAPIServerUnavailable", LastTransitionTime: now}

	got := desiredStatus(mc, available, nil, now)
	if got.Status.Version.Kubernetes != "v1.36.0" {
		t.Errorf("without an inventory, version = %q, want the one reported before", got.Status.Version.Kubernetes)
	}
	var types []string
	for _, c := range got.Status.Conditions {
		types = append(types, fmt.Sprintf("%s=%s gen %d", c.Type, c.Status, c.ObservedGeneration))
	}
	want := []string{"ManagedClusterJoined=True gen 3", "ManagedClusterConditionAvailable=False gen 3"}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	inv := &Inventory{}
	inv.Version.Kubernetes = "v1.37.2"
	if got := desiredStatus(mc, available, inv, now); got.Status.Version.Kubernetes != "v1.37.2" {
		t.Errorf("with an inventory, version = %q, want the inventory's", got.Status.Version.Kubernetes)
	}
	if mc.Status.Conditions != nil {
		t.Errorf("desiredStatus changed its input")
	}
}

// Fresh credentials are looked at again every lease period, not only at their renewal time: a
// wall clock that jumps ahead (a resumed virtual machine) is noticed, which a timer would not.
func TestFreshCredentialsAreLookedAtEveryLeasePeriod(t *testing.T) {
	ca := newTestCA(t)
	a, _ := testAgent(t, ca, newFakeCSRs(t, ca, csrPending), &logtest.Recorder{}, clock.RealClock{})
	now := time.Now()
	a.hub.set(hubClientsWith(t, ca.creds(t, now.Add(-time.Minute), now.Add(9*time.Minute)), newFakeCSRs(t, ca, csrSign)))
	next, err := (&certLoop{a: a}).step(context.Background())
	if err != nil || next != 60*time.Second {
		t.Errorf("step = %s, %v; want the lease period (60s) and no error", next, err)
	}
}
