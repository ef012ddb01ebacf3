package rollout

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

// in makes clusters of one group.
func in(g GroupKey, names ...string) []Cluster {
	out := make([]Cluster, 0, len(names))
	for _, n := range names {
		out = append(out, Cluster{Name: n, Group: g})
	}
	return out
}

var g0, g1 = GroupKey{Index: 0}, GroupKey{Index: 1}
var canary, prod = GroupKey{Name: "canary", Index: 0}, GroupKey{Name: "prod", Index: 1}
var three = in(g0, "c1", "c2", "c3")

func st(name string, s Status, since time.Time) ClusterStatus {
	return ClusterStatus{Name: name, Status: s, Since: since}
}

// with sets the fields Decide fills.
func with(c ClusterStatus, g GroupKey, recheck time.Time) ClusterStatus {
	c.Group, c.RecheckTime = g, recheck
	return c
}

func toApply(g GroupKey, names ...string) []ClusterStatus {
	out := make([]ClusterStatus, 0, len(names))
	for _, n := range names {
		out = append(out, ClusterStatus{Name: n, Group: g, Status: ToApply})
	}
	return out
}

func cfg(minSuccess time.Duration, deadline string, maxFailures intstr.IntOrString) clusterv1alpha1.RolloutConfig {
	return clusterv1alpha1.RolloutConfig{MinSuccessTime: metav1.Duration{Duration: minSuccess}, ProgressDeadline: deadline, MaxFailures: maxFailures}
}

func all(deadline string) clusterv1alpha1.RolloutStrategy {
	return clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All, All: &clusterv1alpha1.RolloutAll{RolloutConfig: cfg(0, deadline, intstr.IntOrString{})}}
}

func progressive(c clusterv1alpha1.RolloutConfig, maxConcurrency intstr.IntOrString, mandatory ...clusterv1alpha1.MandatoryDecisionGroup) clusterv1alpha1.RolloutStrategy {
	return clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
		RolloutConfig: c, MaxConcurrency: maxConcurrency,
		MandatoryDecisionGroups: clusterv1alpha1.MandatoryDecisionGroups{MandatoryDecisionGroups: mandatory}}}
}

func perGroup(c clusterv1alpha1.RolloutConfig, mandatory ...clusterv1alpha1.MandatoryDecisionGroup) clusterv1alpha1.RolloutStrategy {
	return clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.ProgressivePerGroup, ProgressivePerGroup: &clusterv1alpha1.RolloutProgressivePerGroup{
		RolloutConfig: c, MandatoryDecisionGroups: clusterv1alpha1.MandatoryDecisionGroups{MandatoryDecisionGroups: mandatory}}}
}

var (
	zero  = intstr.IntOrString{}
	one   = intstr.FromInt32(1)
	two   = intstr.FromInt32(2)
	half  = intstr.FromString("50%")
	third = intstr.FromString("34%")
)

func TestDecide(t *testing.T) {
	cases := map[string]struct {
		strategy clusterv1alpha1.RolloutStrategy
		clusters []Cluster
		states   []ClusterStatus
		want     Result
		wantErr  string
	}{
		// All
		"all: every new cluster at once": {
			strategy: all("None"), clusters: three,
			want: Result{ToRollout: toApply(g0, "c1", "c2", "c3")},
		},
		"all: an empty type is All": {
			strategy: clusterv1alpha1.RolloutStrategy{}, clusters: three,
			want: Result{ToRollout: toApply(g0, "c1", "c2", "c3")},
		},
		"all: progressDeadline times out the slow cluster and rechecks the other at its deadline": {
			strategy: all("5m"), clusters: three,
			states: []ClusterStatus{st("c1", Progressing, ago(10*time.Minute)), st("c2", Progressing, ago(time.Minute)), st("c3", Succeeded, ago(time.Hour))},
			want: Result{
				ToRollout:    []ClusterStatus{with(st("c2", Progressing, ago(time.Minute)), g0, now.Add(4*time.Minute))},
				TimedOut:     []ClusterStatus{with(st("c1", TimeOut, ago(10*time.Minute)), g0, ago(5*time.Minute))},
				RecheckAfter: 4 * time.Minute,
			},
		},
		"all: progressDeadline None never times out": {
			strategy: all("None"), clusters: three,
			states: []ClusterStatus{st("c1", Failed, ago(100*time.Hour))},
			want:   Result{ToRollout: append([]ClusterStatus{with(st("c1", Failed, ago(100*time.Hour)), g0, time.Time{})}, toApply(g0, "c2", "c3")...)},
		},
		"all: failures never stop it": {
			strategy: all("None"), clusters: three,
			states: []ClusterStatus{st("c1", Failed, ago(time.Minute)), st("c2", Failed, ago(time.Minute))},
			want: Result{ToRollout: append([]ClusterStatus{
				with(st("c1", Failed, ago(time.Minute)), g0, time.Time{}),
				with(st("c2", Failed, ago(time.Minute)), g0, time.Time{})}, toApply(g0, "c3")...)},
		},
		"all: a cluster without a decision is removed": {
			strategy: all("None"), clusters: in(g0, "c1"),
			states: []ClusterStatus{st("c1", Succeeded, ago(time.Minute)), st("gone", Succeeded, ago(time.Minute))},
			want:   Result{Removed: []ClusterStatus{st("gone", Succeeded, ago(time.Minute))}},
		},
		"all: a skipped cluster is left alone": {
			strategy: all("None"), clusters: in(g0, "c1", "c2"),
			states: []ClusterStatus{st("c1", Skip, ago(time.Minute))},
			want:   Result{ToRollout: toApply(g0, "c2")},
		},

		// Progressive
		"progressive: maxConcurrency 1 starts with the first cluster by name": {
			strategy: progressive(cfg(0, "None", zero), one), clusters: in(g0, "c3", "c1", "c2"),
			want: Result{ToRollout: toApply(g0, "c1")},
		},
		"progressive: maxConcurrency 50% of 3 rounds up to 2": {
			strategy: progressive(cfg(0, "None", zero), half), clusters: three,
			want: Result{ToRollout: toApply(g0, "c1", "c2")},
		},
		"progressive: maxConcurrency 34% of 3 rounds up to 2": {
			strategy: progressive(cfg(0, "None", zero), third), clusters: three,
			want: Result{ToRollout: toApply(g0, "c1", "c2")},
		},
		"progressive: maxConcurrency unset means every cluster": {
			strategy: progressive(cfg(0, "None", zero), zero), clusters: three,
			want: Result{ToRollout: toApply(g0, "c1", "c2", "c3")},
		},
		"progressive: a progressing cluster holds its slot": {
			strategy: progressive(cfg(0, "None", zero), one), clusters: three,
			states: []ClusterStatus{st("c1", Progressing, ago(time.Minute))},
			want:   Result{ToRollout: []ClusterStatus{with(st("c1", Progressing, ago(time.Minute)), g0, time.Time{})}},
		},
		"progressive: a succeeded cluster frees its slot": {
			strategy: progressive(cfg(0, "None", zero), one), clusters: three,
			states: []ClusterStatus{st("c1", Succeeded, ago(time.Second))},
			want:   Result{ToRollout: toApply(g0, "c2")},
		},
		"progressive: minSuccessTime holds a succeeded cluster until it has soaked": {
			strategy: progressive(cfg(5*time.Minute, "None", zero), one), clusters: three,
			states: []ClusterStatus{st("c1", Succeeded, ago(2*time.Minute))},
			want: Result{ToRollout: []ClusterStatus{with(st("c1", Succeeded, ago(2*time.Minute)), g0, now.Add(3*time.Minute))},
				RecheckAfter: 3 * time.Minute},
		},
		"progressive: minSuccessTime passed": {
			strategy: progressive(cfg(5*time.Minute, "None", zero), one), clusters: three,
			states: []ClusterStatus{st("c1", Succeeded, ago(6*time.Minute))},
			want:   Result{ToRollout: toApply(g0, "c2")},
		},
		"progressive: maxFailures 0 stops at the first failure": {
			strategy: progressive(cfg(0, "None", zero), one), clusters: three,
			states: []ClusterStatus{st("c1", Failed, ago(time.Minute))},
			want:   Result{ToRollout: []ClusterStatus{with(st("c1", Failed, ago(time.Minute)), g0, time.Time{})}, MaxFailureBreach: true},
		},
		"progressive: a failed cluster within progressDeadline holds its slot": {
			strategy: progressive(cfg(0, "10m", one), one), clusters: three,
			states: []ClusterStatus{st("c1", Failed, ago(time.Minute))},
			want: Result{ToRollout: []ClusterStatus{with(st("c1", Failed, ago(time.Minute)), g0, now.Add(9*time.Minute))},
				RecheckAfter: 9 * time.Minute},
		},
		"progressive: past progressDeadline the failed cluster times out and the rollout moves on within maxFailures": {
			strategy: progressive(cfg(0, "10m", one), one), clusters: three,
			states: []ClusterStatus{st("c1", Failed, ago(11*time.Minute))},
			want: Result{ToRollout: toApply(g0, "c2"),
				TimedOut: []ClusterStatus{with(st("c1", TimeOut, ago(11*time.Minute)), g0, ago(time.Minute))}},
		},
		"progressive: a second failure breaches maxFailures 1": {
			strategy: progressive(cfg(0, "10m", one), one), clusters: three,
			states: []ClusterStatus{st("c1", Failed, ago(11*time.Minute)), st("c2", Progressing, ago(20*time.Minute))},
			want: Result{MaxFailureBreach: true, TimedOut: []ClusterStatus{
				with(st("c1", TimeOut, ago(11*time.Minute)), g0, ago(time.Minute)),
				with(st("c2", TimeOut, ago(20*time.Minute)), g0, ago(10*time.Minute))}},
		},
		"progressive: a progressing cluster past progressDeadline counts as a failure": {
			strategy: progressive(cfg(0, "5m", zero), one), clusters: three,
			states: []ClusterStatus{st("c1", Progressing, ago(6*time.Minute))},
			want: Result{MaxFailureBreach: true,
				TimedOut: []ClusterStatus{with(st("c1", TimeOut, ago(6*time.Minute)), g0, ago(time.Minute))}},
		},
		"progressive: after a breach clusters that had the change are still followed, new ones are not": {
			strategy: progressive(cfg(0, "None", zero), two), clusters: three,
			states: []ClusterStatus{st("c1", Failed, ago(time.Minute)), st("c2", Progressing, ago(time.Minute)), st("c3", ToApply, time.Time{})},
			want: Result{MaxFailureBreach: true, ToRollout: []ClusterStatus{
				with(st("c1", Failed, ago(time.Minute)), g0, time.Time{}),
				with(st("c2", Progressing, ago(time.Minute)), g0, time.Time{})}},
		},
		"progressive: maxFailures 50% of 4 tolerates 2": {
			strategy: progressive(cfg(0, "None", half), one), clusters: in(g0, "c1", "c2", "c3", "c4"),
			states: []ClusterStatus{st("c1", TimeOut, ago(time.Minute)), st("c2", TimeOut, ago(time.Minute))},
			want:   Result{ToRollout: toApply(g0, "c3")},
		},
		"progressive: maxFailures above the number of clusters falls back to 0, as OCM does": {
			strategy: progressive(cfg(0, "None", intstr.FromInt32(5)), one), clusters: three,
			states: []ClusterStatus{st("c1", TimeOut, ago(time.Minute))},
			want:   Result{MaxFailureBreach: true},
		},
		"progressive: mandatory groups by name go first": {
			strategy: progressive(cfg(0, "None", zero), one, clusterv1alpha1.MandatoryDecisionGroup{GroupName: "canary"}),
			clusters: append(in(canary, "z1", "z2"), in(prod, "a1", "a2")...),
			want:     Result{ToRollout: toApply(canary, "z1", "z2")},
		},
		"progressive: the rest starts when the mandatory groups succeeded": {
			strategy: progressive(cfg(0, "None", zero), one, clusterv1alpha1.MandatoryDecisionGroup{GroupName: "canary"}),
			clusters: append(in(canary, "z1", "z2"), in(prod, "a1", "a2")...),
			states:   []ClusterStatus{st("z1", Succeeded, ago(time.Minute)), st("z2", Succeeded, ago(time.Minute))},
			want:     Result{ToRollout: toApply(prod, "a1")},
		},
		"progressive: a mandatory group tolerates no failure whatever maxFailures says": {
			strategy: progressive(cfg(0, "None", two), one, clusterv1alpha1.MandatoryDecisionGroup{GroupName: "canary"}),
			clusters: append(in(canary, "z1", "z2"), in(prod, "a1", "a2")...),
			states:   []ClusterStatus{st("z1", Failed, ago(time.Minute)), st("z2", Succeeded, ago(time.Minute))},
			want:     Result{ToRollout: []ClusterStatus{with(st("z1", Failed, ago(time.Minute)), canary, time.Time{})}, MaxFailureBreach: true},
		},
		"progressive: mandatory groups by index": {
			strategy: progressive(cfg(0, "None", zero), zero, clusterv1alpha1.MandatoryDecisionGroup{GroupIndex: 1}),
			clusters: append(in(g0, "a1"), in(g1, "b1", "b2")...),
			want:     Result{ToRollout: toApply(g1, "b1", "b2")},
		},
		"progressive: a mandatory group the placement does not have is ignored": {
			strategy: progressive(cfg(0, "None", zero), one, clusterv1alpha1.MandatoryDecisionGroup{GroupName: "nope"}),
			clusters: three,
			want:     Result{ToRollout: toApply(g0, "c1")},
		},
		"progressive: maxConcurrency counts the clusters outside mandatory groups": {
			strategy: progressive(cfg(0, "None", zero), half, clusterv1alpha1.MandatoryDecisionGroup{GroupIndex: 0}),
			clusters: append(in(g0, "a1"), in(g1, "b1", "b2", "b3", "b4")...),
			states:   []ClusterStatus{st("a1", Succeeded, ago(time.Minute))},
			want:     Result{ToRollout: toApply(g1, "b1", "b2")},
		},

		// ProgressivePerGroup
		"per group: the first group at once": {
			strategy: perGroup(cfg(0, "None", zero)), clusters: append(in(g0, "b", "a"), in(g1, "c")...),
			want: Result{ToRollout: toApply(g0, "a", "b")},
		},
		"per group: the next group when the first succeeded": {
			strategy: perGroup(cfg(0, "None", zero)), clusters: append(in(g0, "a", "b"), in(g1, "c")...),
			states: []ClusterStatus{st("a", Succeeded, ago(time.Minute)), st("b", Succeeded, ago(time.Minute))},
			want:   Result{ToRollout: toApply(g1, "c")},
		},
		"per group: a progressing cluster holds the next group": {
			strategy: perGroup(cfg(0, "None", zero)), clusters: append(in(g0, "a", "b"), in(g1, "c")...),
			states: []ClusterStatus{st("a", Succeeded, ago(time.Minute)), st("b", Progressing, ago(time.Minute))},
			want:   Result{ToRollout: []ClusterStatus{with(st("b", Progressing, ago(time.Minute)), g0, time.Time{})}},
		},
		"per group: minSuccessTime holds the next group": {
			strategy: perGroup(cfg(time.Minute, "None", zero)), clusters: append(in(g0, "a"), in(g1, "c")...),
			states: []ClusterStatus{st("a", Succeeded, ago(30*time.Second))},
			want: Result{ToRollout: []ClusterStatus{with(st("a", Succeeded, ago(30*time.Second)), g0, now.Add(30*time.Second))},
				RecheckAfter: 30 * time.Second},
		},
		"per group: maxFailures 0 stops on a failure in the group": {
			strategy: perGroup(cfg(0, "None", zero)), clusters: append(in(g0, "a", "b"), in(g1, "c")...),
			states: []ClusterStatus{st("a", Failed, ago(time.Minute)), st("b", Succeeded, ago(time.Minute))},
			want:   Result{ToRollout: []ClusterStatus{with(st("a", Failed, ago(time.Minute)), g0, time.Time{})}, MaxFailureBreach: true},
		},
		"per group: a failure within maxFailures lets the next group start": {
			strategy: perGroup(cfg(0, "None", one)), clusters: append(in(g0, "a", "b"), in(g1, "c")...),
			states: []ClusterStatus{st("a", Failed, ago(time.Minute)), st("b", Succeeded, ago(time.Minute))},
			want:   Result{ToRollout: append([]ClusterStatus{with(st("a", Failed, ago(time.Minute)), g0, time.Time{})}, toApply(g1, "c")...)},
		},
		"per group: maxFailures is a percentage of each group": {
			strategy: perGroup(cfg(0, "5m", half)), clusters: append(in(g0, "a", "b"), in(g1, "c")...),
			states: []ClusterStatus{st("a", Progressing, ago(time.Hour)), st("b", Succeeded, ago(time.Minute))},
			want: Result{ToRollout: toApply(g1, "c"),
				TimedOut: []ClusterStatus{with(st("a", TimeOut, ago(time.Hour)), g0, ago(55*time.Minute))}},
		},
		"per group: mandatory groups first": {
			strategy: perGroup(cfg(0, "None", zero), clusterv1alpha1.MandatoryDecisionGroup{GroupIndex: 1}),
			clusters: append(in(g0, "a"), in(g1, "c")...),
			want:     Result{ToRollout: toApply(g1, "c")},
		},
		"per group: a group of ToApply states starts when it is reached": {
			strategy: perGroup(cfg(0, "None", zero)), clusters: append(in(g0, "a"), in(g1, "c")...),
			states: []ClusterStatus{st("a", Succeeded, ago(time.Minute)), st("c", ToApply, time.Time{})},
			want:   Result{ToRollout: toApply(g1, "c")},
		},

		// Bad input
		"bad type": {
			strategy: clusterv1alpha1.RolloutStrategy{Type: "Sometimes"}, clusters: three,
			wantErr: `rolloutStrategy.type "Sometimes" is not a rollout type`,
		},
		"bad progressDeadline": {
			strategy: all("1.5h"), clusters: three,
			wantErr: `rolloutStrategy.all.progressDeadline "1.5h" is not valid`,
		},
		"bad maxConcurrency": {
			strategy: progressive(cfg(0, "None", zero), intstr.FromString("half")), clusters: three,
			wantErr: `rolloutStrategy.progressive.maxConcurrency "half" is not valid`,
		},
		"bad maxFailures": {
			strategy: perGroup(cfg(0, "None", intstr.FromString("1"))), clusters: three,
			wantErr: `rolloutStrategy.progressivePerGroup.maxFailures "1" is not valid`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Decide(clocktesting.NewFakePassiveClock(now), tc.strategy, tc.clusters, tc.states)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

// A zero Since is now: a deadline of 0 times a cluster out at once, a soak time holds it.
func TestDecideZeroSince(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(now)
	got, err := Decide(clk, all("0s"), in(g0, "c1"), []ClusterStatus{{Name: "c1", Status: Progressing}})
	if err != nil {
		t.Fatal(err)
	}
	want := Result{TimedOut: []ClusterStatus{{Name: "c1", Group: g0, Status: TimeOut, RecheckTime: now}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decide (-want +got):\n%s", diff)
	}
}

func TestStatusString(t *testing.T) {
	for s, want := range map[Status]string{ToApply: "ToApply", TimeOut: "TimeOut", Skip: "Skip", Status(9): "Status(9)"} {
		if got := s.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(s), got, want)
		}
	}
}
