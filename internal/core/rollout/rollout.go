package rollout

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/clock"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
)

// Status is where a cluster is in a rollout.
type Status int

const (
	// ToApply: the change has not been applied to the cluster yet.
	ToApply Status = iota
	// Progressing: the change is applied and has not succeeded or failed yet.
	Progressing
	// Succeeded: the change is applied and succeeded.
	Succeeded
	// Failed: the change is applied and failed.
	Failed
	// TimeOut: the cluster was Progressing or Failed for longer than progressDeadline.
	TimeOut
	// Skip: the rollout leaves the cluster alone.
	Skip
)

var statusNames = [...]string{"ToApply", "Progressing", "Succeeded", "Failed", "TimeOut", "Skip"}

func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// GroupKey names a placement's decision group: its index, and its name when it has one.
type GroupKey struct {
	Name  string
	Index int32
}

// Cluster is a cluster a placement selected, with its decision group.
type Cluster struct {
	Name  string
	Group GroupKey
}

// ClusterStatus is a cluster's rollout state. Callers set Name, Status and Since; Decide fills
// Group and, for clusters it returns, RecheckTime.
type ClusterStatus struct {
	Name   string
	Group  GroupKey
	Status Status
	// Since is when the cluster entered Status: progressDeadline counts from it for Progressing
	// and Failed, minSuccessTime for Succeeded. Zero means now.
	Since time.Time
	// RecheckTime is when the cluster's soak time (Succeeded) or deadline (Progressing, Failed)
	// ends; zero when there is none.
	RecheckTime time.Time
}

// Result is what to do now.
type Result struct {
	// ToRollout are the clusters in the rollout now: those ToApply get the change; the others
	// (Progressing, Failed within the deadline, Succeeded within the soak time) hold their place.
	ToRollout []ClusterStatus
	// TimedOut are the clusters past progressDeadline.
	TimedOut []ClusterStatus
	// Removed are the clusters that have a state but no longer a decision.
	Removed []ClusterStatus
	// MaxFailureBreach is true when more clusters failed or timed out than maxFailures allows:
	// the rollout stopped.
	MaxFailureBreach bool
	// RecheckAfter is how long until the earliest soak time or deadline of ToRollout ends, when
	// the result can change without any cluster changing; 0 when none will.
	RecheckAfter time.Duration
}

// forever is a progressDeadline of None.
const forever = time.Duration(math.MaxInt64)

// Decide says which of clusters (a placement's decisions) the change goes to now, given the
// clusters' states (a cluster without one is ToApply) and strategy.
func Decide(clk clock.PassiveClock, strategy clusterv1alpha1.RolloutStrategy, clusters []Cluster, states []ClusterStatus) (Result, error) {
	d := decider{now: clk.Now(), groups: map[GroupKey][]string{}, groupOf: map[string]GroupKey{}}
	for _, c := range clusters {
		if _, ok := d.groupOf[c.Name]; ok {
			continue
		}
		d.groupOf[c.Name] = c.Group
		d.groups[c.Group] = append(d.groups[c.Group], c.Name)
	}
	for k := range d.groups {
		slices.Sort(d.groups[k])
	}
	var current, removed []ClusterStatus
	for _, s := range states {
		if g, ok := d.groupOf[s.Name]; ok {
			s.Group = g
			current = append(current, s)
		} else {
			removed = append(removed, s)
		}
	}
	var res Result
	var err error
	switch strategy.Type {
	case clusterv1alpha1.All, "":
		res, err = d.all(strategy.All, current)
	case clusterv1alpha1.Progressive:
		res, err = d.progressive(strategy.Progressive, current)
	case clusterv1alpha1.ProgressivePerGroup:
		res, err = d.progressivePerGroup(strategy.ProgressivePerGroup, current)
	default:
		return Result{}, fmt.Errorf("rolloutStrategy.type %q is not a rollout type: use All, Progressive or ProgressivePerGroup", strategy.Type)
	}
	if err != nil {
		return Result{}, err
	}
	res.Removed = removed
	return res, nil
}

type decider struct {
	now     time.Time
	groups  map[GroupKey][]string // clusters by group, sorted by name
	groupOf map[string]GroupKey
}

func (d *decider) all(cfg *clusterv1alpha1.RolloutAll, current []ClusterStatus) (Result, error) {
	if cfg == nil {
		cfg = &clusterv1alpha1.RolloutAll{}
	}
	timeout, err := parseTimeout("all", cfg.ProgressDeadline)
	if err != nil {
		return Result{}, err
	}
	groups := d.besides(nil)
	n := countClusters(d.groups, groups)
	// All has no soak time and tolerates as many failures as there are clusters.
	return d.perCluster(groups, n, n, 0, timeout, current), nil
}

func (d *decider) progressive(cfg *clusterv1alpha1.RolloutProgressive, current []ClusterStatus) (Result, error) {
	if cfg == nil {
		cfg = &clusterv1alpha1.RolloutProgressive{}
	}
	minSuccess := cfg.MinSuccessTime.Duration
	timeout, err := parseTimeout("progressive", cfg.ProgressDeadline)
	if err != nil {
		return Result{}, err
	}
	maxFailures, err := rolloutSize("progressive.maxFailures", cfg.MaxFailures, len(d.groupOf), 0)
	if err != nil {
		return Result{}, err
	}
	mandatory, res, busy := d.mandatoryFirst(cfg.MandatoryDecisionGroups.MandatoryDecisionGroups, minSuccess, timeout, current)
	if busy {
		return res, nil
	}
	rest := d.besides(mandatory)
	n := countClusters(d.groups, rest)
	concurrency, err := rolloutSize("progressive.maxConcurrency", cfg.MaxConcurrency, n, n)
	if err != nil {
		return Result{}, err
	}
	return d.perCluster(rest, concurrency, maxFailures, minSuccess, timeout, current), nil
}

func (d *decider) progressivePerGroup(cfg *clusterv1alpha1.RolloutProgressivePerGroup, current []ClusterStatus) (Result, error) {
	if cfg == nil {
		cfg = &clusterv1alpha1.RolloutProgressivePerGroup{}
	}
	minSuccess := cfg.MinSuccessTime.Duration
	timeout, err := parseTimeout("progressivePerGroup", cfg.ProgressDeadline)
	if err != nil {
		return Result{}, err
	}
	if _, err := rolloutSize("progressivePerGroup.maxFailures", cfg.MaxFailures, 0, 0); err != nil {
		return Result{}, err
	}
	mandatory, res, busy := d.mandatoryFirst(cfg.MandatoryDecisionGroups.MandatoryDecisionGroups, minSuccess, timeout, current)
	if busy {
		return res, nil
	}
	return d.perGroup(d.besides(mandatory), cfg.MaxFailures, minSuccess, timeout, current), nil
}

// mandatoryFirst rolls the mandatory decision groups out first, all at once and with no failure
// allowed: while any of their clusters is still to roll out or timed out, res is the result and
// busy is true; after that the other groups may go.
func (d *decider) mandatoryFirst(names []clusterv1alpha1.MandatoryDecisionGroup, minSuccess, timeout time.Duration,
	current []ClusterStatus) (mandatory []GroupKey, res Result, busy bool) {
	mandatory = d.fulfill(names)
	if len(mandatory) == 0 {
		return nil, Result{}, false
	}
	res = d.perGroup(mandatory, intstr.FromInt32(0), minSuccess, timeout, current)
	return mandatory, res, len(res.ToRollout) > 0 || len(res.TimedOut) > 0
}

// perCluster rolls out to clusters in name order, rolloutSize at a time, and stops when more
// than maxFailures of the clusters with a state failed or timed out.
func (d *decider) perCluster(groups []GroupKey, rolloutSize, maxFailures int, minSuccess, timeout time.Duration, current []ClusterStatus) Result {
	var res Result
	existing := map[string]bool{}
	failures := 0
	sorted := slices.Clone(current)
	slices.SortStableFunc(sorted, func(a, b ClusterStatus) int { return strings.Compare(a.Name, b.Name) })
	for _, st := range sorted {
		if st.Name == "" {
			continue
		}
		existing[st.Name] = true
		// Once stopped, only clusters that already had the change are followed.
		if !res.MaxFailureBreach || st.Status != ToApply {
			d.determine(&st, minSuccess, timeout, &res)
		}
		if st.Status == TimeOut || st.Status == Failed {
			failures++
			res.MaxFailureBreach = failures > maxFailures
		}
		if len(res.ToRollout) >= rolloutSize {
			return d.finish(res)
		}
	}
	if res.MaxFailureBreach {
		return d.finish(res)
	}
	var names []string
	for _, g := range groups {
		names = append(names, d.groups[g]...)
	}
	slices.Sort(names)
	for _, c := range names {
		if existing[c] {
			continue
		}
		res.ToRollout = append(res.ToRollout, ClusterStatus{Name: c, Group: d.groupOf[c], Status: ToApply})
		if len(res.ToRollout) >= rolloutSize {
			break
		}
	}
	return d.finish(res)
}

// perGroup rolls out one decision group at a time, in index order: the next group starts when no
// cluster is left in the rollout (but for those that failed), and not when a group has more
// failures than maxFailures of its clusters.
func (d *decider) perGroup(groups []GroupKey, maxFailures intstr.IntOrString, minSuccess, timeout time.Duration, current []ClusterStatus) Result {
	var res Result
	existing := map[string]Status{}
	for _, st := range current {
		if st.Name == "" || st.Status == ToApply {
			continue
		}
		d.determine(&st, minSuccess, timeout, &res)
		existing[st.Name] = st.Status
	}
	totalFailures := 0
	for _, g := range groups {
		clusters := d.groups[g]
		groupFailures := 0
		// The format was checked before.
		maxGroupFailures, _ := rolloutSize("", maxFailures, len(clusters), 0)
		for _, c := range clusters {
			if st, ok := existing[c]; ok {
				if st == TimeOut || st == Failed {
					groupFailures++
					res.MaxFailureBreach = groupFailures > maxGroupFailures
				}
				continue
			}
			res.ToRollout = append(res.ToRollout, ClusterStatus{Name: c, Group: g, Status: ToApply})
		}
		totalFailures += groupFailures
		if len(res.ToRollout)-totalFailures > 0 || res.MaxFailureBreach {
			return d.finish(res)
		}
	}
	return d.finish(res)
}

// determine files a cluster with a state under ToRollout or TimedOut, or neither (succeeded and
// soaked, timed out before, skipped). A cluster past its deadline becomes TimeOut in st too.
func (d *decider) determine(st *ClusterStatus, minSuccess, timeout time.Duration, res *Result) {
	switch st.Status {
	case ToApply:
		res.ToRollout = append(res.ToRollout, *st)
	case Succeeded:
		if t, ok := d.recheck(st.Since, minSuccess); ok && d.now.Before(t) {
			st.RecheckTime = t
			res.ToRollout = append(res.ToRollout, *st)
		}
	case TimeOut, Skip:
	default: // Progressing, Failed, or a state this package does not know.
		t, ok := d.recheck(st.Since, timeout)
		if ok {
			st.RecheckTime = t
		}
		if !ok || d.now.Before(t) {
			res.ToRollout = append(res.ToRollout, *st)
		} else {
			st.Status = TimeOut
			res.TimedOut = append(res.TimedOut, *st)
		}
	}
}

// recheck is since (now when zero) plus d; false for a deadline of None.
func (d *decider) recheck(since time.Time, dur time.Duration) (time.Time, bool) {
	if dur == forever {
		return time.Time{}, false
	}
	if since.IsZero() {
		since = d.now
	}
	return since.Add(dur), true
}

// finish sets RecheckAfter: the earliest future recheck time of the clusters in the rollout.
func (d *decider) finish(res Result) Result {
	for _, st := range res.ToRollout {
		if st.RecheckTime.IsZero() {
			continue
		}
		if after := st.RecheckTime.Sub(d.now); after > 0 && (res.RecheckAfter == 0 || after < res.RecheckAfter) {
			res.RecheckAfter = after
		}
	}
	return res
}

// fulfill turns mandatory decision groups into the placement's group keys: a group named by
// groupName is every group of that name, by groupIndex the group of that index.
func (d *decider) fulfill(mandatory []clusterv1alpha1.MandatoryDecisionGroup) []GroupKey {
	var out []GroupKey
	for _, m := range mandatory {
		for _, k := range d.orderedGroups() {
			if (m.GroupName != "" && k.Name == m.GroupName) || (m.GroupName == "" && k.Index == m.GroupIndex) {
				if !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	slices.SortFunc(out, compareGroups)
	return out
}

// besides is every group but those in exclude, in index order.
func (d *decider) besides(exclude []GroupKey) []GroupKey {
	var out []GroupKey
	for _, k := range d.orderedGroups() {
		if !slices.Contains(exclude, k) {
			out = append(out, k)
		}
	}
	return out
}

func (d *decider) orderedGroups() []GroupKey {
	keys := make([]GroupKey, 0, len(d.groups))
	for k := range d.groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareGroups)
	return keys
}

func compareGroups(a, b GroupKey) int {
	if a.Index != b.Index {
		return int(a.Index) - int(b.Index)
	}
	return strings.Compare(a.Name, b.Name)
}

func countClusters(groups map[GroupKey][]string, keys []GroupKey) int {
	n := 0
	for _, k := range keys {
		n += len(groups[k])
	}
	return n
}

// progressDeadlinePattern is the CRD's pattern for progressDeadline, as OCM checks it (the
// alternation leaves "None" unanchored at the start and the duration at the end).
var progressDeadlinePattern = regexp.MustCompile(`^(([0-9])+[h|m|s])|None$`)

// parseTimeout reads progressDeadline: None or "" is for ever.
func parseTimeout(field, s string) (time.Duration, error) {
	if s == "None" || s == "" {
		return forever, nil
	}
	if !progressDeadlinePattern.MatchString(s) {
		return forever, fmt.Errorf("rolloutStrategy.%s.progressDeadline %q is not valid: use None or a duration such as 90s, 10m or 1h", field, s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return forever, fmt.Errorf("rolloutStrategy.%s.progressDeadline %q is not valid: use None or a duration such as 90s, 10m or 1h", field, s)
	}
	return d, nil
}

// rolloutSize turns a number or percentage of total clusters (rounded up) into a count; 0, a
// negative count or more than total give def.
func rolloutSize(field string, v intstr.IntOrString, total, def int) (int, error) {
	var n int
	switch v.Type {
	case intstr.Int:
		n = v.IntValue()
	case intstr.String:
		p, ok := strings.CutSuffix(v.StrVal, "%")
		f, err := strconv.ParseFloat(p, 64)
		if !ok || err != nil {
			return def, fmt.Errorf("rolloutStrategy.%s %q is not valid: use a number such as 2 or a percentage such as 25%%", field, v.StrVal)
		}
		n = int(math.Ceil(f / 100 * float64(total)))
	default:
		return def, fmt.Errorf("rolloutStrategy.%s has an unknown type %d: use a number or a percentage", field, v.Type)
	}
	if n <= 0 || n > total {
		n = def
	}
	return n, nil
}
