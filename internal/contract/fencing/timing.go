package fencing

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	failoverv1alpha1 "github.com/flotilla/flotilla/api/failover/v1alpha1"
)

// Annotations the hub keeps on a ManagedCluster. The agent may not write its ManagedCluster's
// metadata (it has the status subresource only), and the hub's admission webhook refuses a change
// to any annotation with ClusterAnnotationPrefix by anyone but the hub, so they are the hub's word.
const (
	// ClusterAnnotationPrefix starts every annotation the hub keeps on a ManagedCluster.
	ClusterAnnotationPrefix = "failover.flotilla.io/"

	// AnnotationTiming holds the cluster's effective Timing (Timing.String); absent when the
	// cluster is not fenced.
	AnnotationTiming = "failover.flotilla.io/timing"
	// AnnotationEpoch is how many times the hub has declared the cluster lost while a Timing
	// applied. An agent that finds it raised after a partition knows its fenced workloads may run
	// elsewhere now.
	AnnotationEpoch = "failover.flotilla.io/epoch"
	// AnnotationLostAt is when the hub last declared the cluster lost under a Timing (RFC 3339),
	// written with the epoch.
	AnnotationLostAt = "failover.flotilla.io/lost-at"
)

// ClockSkew is the clock-skew bound of the rule LostAfter >= FenceAfter + Lease + ClockSkew.
const ClockSkew = failoverv1alpha1.ClockSkewSeconds * time.Second

// FenceLeases is the rule FenceAfter >= FenceLeases x Lease: a healthy agent renews up to 1.25
// lease periods apart, so a shorter FenceAfter fences a cluster that never lost the hub.
const FenceLeases = failoverv1alpha1.FenceLeases

// Timing is the durations one cluster runs under.
type Timing struct {
	// Lease is how often the agent renews its lease.
	Lease time.Duration
	// FenceAfter is how long after its last renewal the agent stops fenced workloads.
	FenceAfter time.Duration
	// LostAfter is how long after the last renewal the hub declares the cluster lost.
	LostAfter time.Duration
}

// Default is the Timing of a cluster that runs fenced work under no FailoverPolicy.
var Default = Timing{
	Lease:      failoverv1alpha1.DefaultLeaseDurationSeconds * time.Second,
	FenceAfter: failoverv1alpha1.DefaultFenceAfterSeconds * time.Second,
	LostAfter:  failoverv1alpha1.DefaultLostAfterSeconds * time.Second,
}

// FromSpec is a policy's Timing, with the API's defaults for fields left zero.
func FromSpec(s failoverv1alpha1.FailoverPolicySpec) Timing {
	t := Default
	if s.LeaseDurationSeconds > 0 {
		t.Lease = time.Duration(s.LeaseDurationSeconds) * time.Second
	}
	if s.FenceAfterSeconds > 0 {
		t.FenceAfter = time.Duration(s.FenceAfterSeconds) * time.Second
	}
	if s.LostAfterSeconds > 0 {
		t.LostAfter = time.Duration(s.LostAfterSeconds) * time.Second
	}
	return t
}

// Validate says what is wrong with t, naming the rule.
func (t Timing) Validate() error {
	switch {
	case t.Lease <= 0:
		return fmt.Errorf("lease must be positive, not %s", t.Lease)
	case t.FenceAfter <= 0:
		return fmt.Errorf("fence after must be positive, not %s", t.FenceAfter)
	case t.FenceAfter < FenceLeases*t.Lease:
		return fmt.Errorf("fence after (%s) must be at least %d leases (%s each), or it rises between the renewals of a healthy cluster and stops its fenced workloads",
			t.FenceAfter, FenceLeases, t.Lease)
	case t.LostAfter < t.FenceAfter+t.Lease+ClockSkew:
		return fmt.Errorf("lost after (%s) must be at least fence after (%s) + lease (%s) + the clock-skew bound (%s), so that fenced work has stopped before it may start elsewhere",
			t.LostAfter, t.FenceAfter, t.Lease, ClockSkew)
	}
	return nil
}

// Combine is the Timing of a cluster under several policies: the shortest lease and fence and
// the longest loss, which keeps Validate's rules if each of ts keeps them: the shortest fence is
// some x's, at least FenceLeases x.Lease, and so at least FenceLeases times the shortest lease;
// the longest loss is at least that same x's fence + lease + skew. ok is false for none.
func Combine(ts []Timing) (t Timing, ok bool) {
	for i, x := range ts {
		if i == 0 {
			t = x
			continue
		}
		t.Lease = min(t.Lease, x.Lease)
		t.FenceAfter = min(t.FenceAfter, x.FenceAfter)
		t.LostAfter = max(t.LostAfter, x.LostAfter)
	}
	return t, len(ts) > 0
}

// String is the annotation's form: "lease=5s fence=20s lost=30s".
func (t Timing) String() string {
	return fmt.Sprintf("lease=%s fence=%s lost=%s", t.Lease, t.FenceAfter, t.LostAfter)
}

// ParseTiming reads Timing.String's form, and refuses a Timing that breaks Validate's rule.
func ParseTiming(s string) (Timing, error) {
	var t Timing
	seen := map[string]bool{}
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || seen[k] {
			return Timing{}, fmt.Errorf("annotation %s: %q is not key=duration once each for lease, fence and lost", AnnotationTiming, f)
		}
		seen[k] = true
		d, err := time.ParseDuration(v)
		if err != nil {
			return Timing{}, fmt.Errorf("annotation %s: %s: %w", AnnotationTiming, k, err)
		}
		switch k {
		case "lease":
			t.Lease = d
		case "fence":
			t.FenceAfter = d
		case "lost":
			t.LostAfter = d
		default:
			return Timing{}, fmt.Errorf("annotation %s: unknown key %q (want lease, fence and lost)", AnnotationTiming, k)
		}
	}
	if len(seen) != 3 {
		return Timing{}, fmt.Errorf("annotation %s: %q needs lease, fence and lost", AnnotationTiming, s)
	}
	if err := t.Validate(); err != nil {
		return Timing{}, fmt.Errorf("annotation %s: %w", AnnotationTiming, err)
	}
	return t, nil
}

// OfCluster is the Timing in a ManagedCluster's annotations; ok is false when there is none or it
// does not parse (the error says why).
func OfCluster(annotations map[string]string) (Timing, bool, error) {
	s, found := annotations[AnnotationTiming]
	if !found {
		return Timing{}, false, nil
	}
	t, err := ParseTiming(s)
	return t, err == nil, err
}

// Epoch is the epoch in a ManagedCluster's annotations; zero when unset or unreadable.
func Epoch(annotations map[string]string) int64 {
	n, err := strconv.ParseInt(annotations[AnnotationEpoch], 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// LostAt is the time in AnnotationLostAt; ok is false when unset or unreadable.
func LostAt(annotations map[string]string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, annotations[AnnotationLostAt])
	return t, err == nil
}
