package scheduler

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/clusterset"
)

// Scheduler schedules placements with a set of plugins and a clock.
type Scheduler struct {
	Clock   clock.PassiveClock
	Plugins Plugins
	// Brief explains the decisions only: Result.Clusters is nil, and the clusters not chosen are
	// ranked only as far as choosing needs. The controller, which writes decisions and throws
	// the explanation away, schedules briefly; explain and simulate do not. Decisions, reasons,
	// groups and conditions are the same either way.
	Brief bool
}

// New returns a Scheduler with the default plugins.
func New(c clock.PassiveClock) *Scheduler {
	return &Scheduler{Clock: c, Plugins: DefaultPlugins()}
}

// Schedule schedules the placement against the snapshot at the scheduler clock's time.
func (s *Scheduler) Schedule(p *clusterv1beta1.Placement, snap *Snapshot) Result {
	return s.schedule(p, snap, s.Clock.Now())
}

// Schedule schedules the placement against the snapshot at now with the default plugins.
func Schedule(p *clusterv1beta1.Placement, snap *Snapshot, now time.Time) Result {
	return (&Scheduler{Plugins: DefaultPlugins()}).schedule(p, snap, now)
}

// prioritizer is one configured, weighted score plugin.
type prioritizer struct {
	plugin framework.ScorePlugin
	weight int32
}

// candidate is a cluster on its way through the pipeline.
type candidate struct {
	cluster  *clusterv1.ManagedCluster
	expl     *ClusterExplanation
	demoted  bool
	filtered bool
	// chosen by choose; filled when only to fill the slots left, despite refusal.
	chosen, filled bool
	// refusal is the last select plugin's refusal, and refusedBy its name.
	refusal   *framework.Status
	refusedBy string
}

func (s *Scheduler) schedule(p *clusterv1beta1.Placement, snap *Snapshot, now time.Time) Result {
	h := newHandle(p, snap, now)
	pl, err := s.build(h)
	if err != nil {
		return misconfigured(p, now, err)
	}
	res := Result{}
	sc := newScratch(s.Brief)
	defer sc.release(s.Brief)
	set := snap.candidates(p)
	excluded := make([]ClusterExplanation, 0, len(set.Excluded))
	for _, ex := range set.Excluded {
		excluded = append(excluded, ClusterExplanation{Name: ex.Cluster.Name, FilteredBy: clusterset.Name, Message: ex.Message})
	}

	cands := sized(&sc.cands, len(set.Candidates))
	expls := sized(&sc.expls, len(set.Candidates))
	passing := sized(&sc.passing, len(set.Candidates))[:0]
	for i, c := range set.Candidates {
		expls[i].Name = c.Name
		cands[i] = candidate{cluster: c, expl: &expls[i]}
		cd := &cands[i]
		if after := cd.filter(pl.filters); after > 0 && (res.RequeueAfter == 0 || after < res.RequeueAfter) {
			res.RequeueAfter = after
		}
		if !cd.filtered {
			passing = append(passing, cd)
		}
	}

	score(passing, pl.prioritizers, sc)
	want := len(passing)
	if n := p.Spec.NumberOfClusters; n != nil && int(*n) < want {
		want = max(int(*n), 0)
	}
	if s.Brief && len(pl.selectors) == 0 {
		// Without select plugins the first want are chosen: only they need their order.
		rankTop(passing, want)
	} else {
		rank(passing)
	}
	chosen := choose(passing, want, pl.selectors)
	refused := map[string]int{}
	if s.Brief {
		for _, cd := range passing {
			if !cd.chosen && cd.refusal != nil {
				refused[cd.refusedBy]++
			}
		}
	} else {
		explainNotChosen(passing, want, refused)
	}
	decideChosen(&res, p, snap, pl, chosen, now)
	if !s.Brief {
		res.Clusters = mergeByName(excluded, expls)
	}
	sat := satisfied(p, now, set, len(passing), len(chosen), refused)
	if len(passing) == 0 && len(set.Candidates) > 0 {
		sat.Message += noMatchNote(pl.filters, set.Candidates)
	}
	res.Conditions = []metav1.Condition{
		sat,
		condition(p, now, clusterv1beta1.PlacementConditionMisconfigured, metav1.ConditionFalse,
			clusterv1beta1.PlacementReasonSucceedConfigured, "Placement configurations check pass"),
	}
	return res
}

// filter runs the filters on the candidate until one filters it out, recording what they say in
// its explanation; it returns the soonest time a filter asked to look again (0: none).
func (cd *candidate) filter(filters []framework.FilterPlugin) time.Duration {
	var requeue time.Duration
	for _, f := range filters {
		st := f.Filter(cd.cluster)
		if st != nil && st.RequeueAfter > 0 && (requeue == 0 || st.RequeueAfter < requeue) {
			requeue = st.RequeueAfter
		}
		switch st.CodeOf() {
		case framework.Success, framework.Warning:
			if st != nil && st.Message != "" {
				cd.expl.Message = joinMsg(cd.expl.Message, st.Message)
			}
		case framework.Unschedulable:
			cd.filtered = true
			cd.expl.FilteredBy, cd.expl.Message = f.Name(), st.Message
			return requeue
		case framework.Demoted:
			cd.demoted = true
			cd.expl.Message = joinMsg(cd.expl.Message, st.Message)
		}
	}
	return requeue
}

// explainNotChosen gives every passing cluster its rank, and each one not chosen the reason,
// counting in refused the clusters each select plugin refused.
func explainNotChosen(passing []*candidate, want int, refused map[string]int) {
	notChosen := ", spec.numberOfClusters is " + strconv.Itoa(want)
	chosen := 0
	for _, cd := range passing {
		if cd.chosen {
			chosen++
		}
	}
	// The "not chosen" messages are written into one buffer and cut from one string: a string
	// per cluster was most of the allocations left.
	buf := make([]byte, 0, (len(passing)-chosen)*(len("not chosen: rank ")+6+len(notChosen)))
	type span struct {
		cd         *candidate
		start, end int
	}
	var spans []span
	for i, cd := range passing {
		cd.expl.Rank = i + 1
		switch {
		case cd.chosen:
			cd.expl.Selected = true
			if cd.filled {
				cd.expl.Message = joinMsg(cd.expl.Message, "chosen to fill spec.numberOfClusters although "+cd.refusal.Message)
			}
		case cd.refusal != nil:
			refused[cd.refusedBy]++
			cd.expl.Message = joinMsg(cd.expl.Message, "not chosen: rank "+strconv.Itoa(i+1)+"; "+cd.refusal.Message)
		default:
			start := len(buf)
			if cd.expl.Message != "" {
				buf = append(append(buf, cd.expl.Message...), "; "...)
			}
			buf = append(strconv.AppendInt(append(buf, "not chosen: rank "...), int64(i+1), 10), notChosen...)
			spans = append(spans, span{cd, start, len(buf)})
		}
	}
	all := string(buf)
	for _, sp := range spans {
		sp.cd.expl.Message = all[sp.start:sp.end]
	}
}

// decide fills res with the chosen clusters' decisions, groups and PlacementDecision slices.
func decideChosen(res *Result, p *clusterv1beta1.Placement, snap *Snapshot, pl *pipeline, chosen []*candidate, now time.Time) {
	selected := make([]*clusterv1.ManagedCluster, len(chosen))
	decisions := make([]clusterv1beta1.ClusterDecision, len(chosen))
	for i, cd := range chosen {
		selected[i] = cd.cluster
		decisions[i] = clusterv1beta1.ClusterDecision{ClusterName: cd.cluster.Name, Score: cd.expl.TotalScore, Reason: reason(cd)}
	}
	res.RequeueAfter = decide(pl.deciders, decisions, chosen, res.RequeueAfter)
	res.LastScoreUpdateTime = lastScoreUpdate(p, snap, decisions, now)
	byName := make(map[string]Decision, len(decisions))
	for _, d := range decisions {
		byName[d.ClusterName] = Decision{ClusterName: d.ClusterName, Score: d.Score, Reason: d.Reason}
	}

	res.Groups = pl.groups.split(selected)
	for _, g := range res.Groups {
		pl.order.sort(g.Clusters, byName)
		for _, c := range g.Clusters {
			d := byName[c]
			d.DecisionGroupIndex, d.DecisionGroupName = g.Index, g.Name
			res.Decisions = append(res.Decisions, d)
		}
	}
	res.PlacementDecisions = SlicePlacementDecisions(p.Name, res.Groups, byName)
}

// builtInNames are the registered built-in prioritizer names, sorted.
func (s *Scheduler) builtInNames() []string {
	var names []string
	for n := range s.Plugins.Prioritizers {
		if n != string(clusterv1beta1.ScoreCoordinateTypeAddOn) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

type configuration struct {
	coord  *clusterv1beta1.ScoreCoordinate
	weight int32
	index  int
}

// configurations resolves the prioritizer policy: Additive (the default) implies Steady and
// Balance with weight 1 unless configured; Exact uses only what is listed. Weight defaults to 1.
func (s *Scheduler) configurations(pp clusterv1beta1.PrioritizerPolicy) ([]configuration, error) {
	var out []configuration
	switch pp.Mode {
	case clusterv1beta1.PrioritizerPolicyModeExact:
	case clusterv1beta1.PrioritizerPolicyModeAdditive, "":
		for _, n := range []string{clusterv1beta1.PrioritizerSteady, clusterv1beta1.PrioritizerBalance} {
			out = append(out, configuration{coord: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: n},
				weight: clusterv1beta1.DefaultPrioritizerWeight, index: -1})
		}
	default:
		return nil, &framework.ConfigError{Field: "spec.prioritizerPolicy.mode",
			Message: fmt.Sprintf("unknown mode %q; use Additive or Exact", pp.Mode)}
	}
	for i, c := range pp.Configurations {
		coord := c.ScoreCoordinate
		if coord == nil {
			return nil, &framework.ConfigError{Field: fmt.Sprintf("spec.prioritizerPolicy.configurations[%d].scoreCoordinate", i),
				Message: "is required: give type BuiltIn with builtIn, or type AddOn with addOn"}
		}
		w := clusterv1beta1.DefaultPrioritizerWeight
		if c.Weight != nil {
			w = *c.Weight
		}
		cf := configuration{coord: coord, weight: w, index: i}
		// As OCM, a coordinate listed again (or implied by Additive) takes the last weight given.
		if j := slices.IndexFunc(out, func(o configuration) bool { return sameCoordinate(o.coord, coord) }); j >= 0 {
			out[j] = cf
		} else {
			out = append(out, cf)
		}
	}
	return out, nil
}

func sameCoordinate(a, b *clusterv1beta1.ScoreCoordinate) bool {
	isAddOn := func(c *clusterv1beta1.ScoreCoordinate) bool { return c.Type == clusterv1beta1.ScoreCoordinateTypeAddOn }
	switch {
	case isAddOn(a) != isAddOn(b):
		return false
	case isAddOn(a):
		return a.AddOn != nil && b.AddOn != nil && *a.AddOn == *b.AddOn
	default:
		return a.BuiltIn == b.BuiltIn
	}
}

// score fills each passing candidate's Scores and TotalScore.
func score(passing []*candidate, prios []prioritizer, sc *scratch) {
	clusters := sized(&sc.clusters, len(passing))
	// One backing array for every cluster's scores: an allocation per cluster was a large cost.
	backing := sized(&sc.backing, len(passing)*len(prios))
	for i, cd := range passing {
		clusters[i] = cd.cluster
		cd.expl.Scores = backing[i*len(prios) : i*len(prios) : (i+1)*len(prios)]
	}
	raw := sized(&sc.raw, len(passing))
	var details []string // a Success status's message: the figures behind the score
	for _, pr := range prios {
		name := pr.plugin.Name()
		for i, cd := range passing {
			v, st := pr.plugin.Score(cd.cluster)
			switch st.CodeOf() {
			case framework.Warning:
				cd.expl.Warnings = append(cd.expl.Warnings, name+": "+st.Message)
			case framework.Success:
				if st != nil && st.Message != "" {
					if details == nil {
						details = make([]string, len(passing))
					}
					details[i] = st.Message
				}
			}
			raw[i] = v
		}
		if n, ok := pr.plugin.(framework.NormalizeScorePlugin); ok {
			n.NormalizeScore(clusters, raw)
		}
		for i, cd := range passing {
			ps := PrioritizerScore{Prioritizer: name, Weight: pr.weight, Score: raw[i]}
			if details != nil {
				ps.Detail, details[i] = details[i], ""
			}
			cd.expl.Scores = append(cd.expl.Scores, ps)
			cd.expl.TotalScore += int64(pr.weight) * raw[i]
		}
	}
}

// reason is a decision's short reason, such as "score 187 = Steady 100 + Balance 87".
func reason(cd *candidate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "score %d", cd.expl.TotalScore)
	for i, s := range cd.expl.Scores {
		if i == 0 {
			b.WriteString(" = ")
		} else {
			b.WriteString(" + ")
		}
		if s.Weight != 1 {
			fmt.Fprintf(&b, "%d*", s.Weight)
		}
		fmt.Fprintf(&b, "%s %d", s.Prioritizer, s.Score)
	}
	if cd.demoted {
		b.WriteString("; " + cd.expl.Message)
	}
	return b.String()
}

// NoClusterChosenMessage is OCM's PlacementSatisfied message for a placement that decides no
// cluster although some qualify (spec.numberOfClusters 0): Flotilla's begins with it.
const NoClusterChosenMessage = "No ManagedCluster matches any of the cluster predicate"

func satisfied(p *clusterv1beta1.Placement, now time.Time, set clusterset.Result, passing, selected int, refused map[string]int) metav1.Condition {
	reason, msg, status := clusterv1beta1.PlacementReasonAllDecisionsScheduled, "All cluster decisions scheduled", metav1.ConditionTrue
	switch {
	case set.Reason != "":
		reason, msg, status = set.Reason, set.Message, metav1.ConditionFalse
	case passing == 0:
		reason, msg, status = clusterv1beta1.PlacementReasonNoManagedClusterMatched,
			"No ManagedCluster matches any of the cluster predicates in spec.predicates or tolerates its taints in spec.tolerations", metav1.ConditionFalse
	case selected == 0:
		// OCM reports a placement without decisions as matching no cluster, with this message,
		// also when the clusters qualify and spec.numberOfClusters is 0; the rest says why.
		reason, status = clusterv1beta1.PlacementReasonNoManagedClusterMatched, metav1.ConditionFalse
		msg = NoClusterChosenMessage
		if n := p.Spec.NumberOfClusters; n != nil && *n <= 0 {
			msg += fmt.Sprintf("; spec.numberOfClusters is %d, so none of the %d qualifying clusters is chosen", *n, passing)
		} else {
			msg += fmt.Sprintf("; none of the %d qualifying clusters is chosen", passing)
		}
		msg += refusedNote(refused)
	case p.Spec.NumberOfClusters != nil && selected < int(*p.Spec.NumberOfClusters):
		reason, status = clusterv1beta1.PlacementReasonNotAllDecisionsScheduled, metav1.ConditionFalse
		msg = fmt.Sprintf("%d cluster decisions unscheduled: spec.numberOfClusters is %d, %d clusters qualify",
			int(*p.Spec.NumberOfClusters)-selected, *p.Spec.NumberOfClusters, passing) + refusedNote(refused)
	case p.Spec.NumberOfClusters == nil && selected < passing:
		reason, status = clusterv1beta1.PlacementReasonNotAllDecisionsScheduled, metav1.ConditionFalse
		msg = fmt.Sprintf("%d of %d qualifying clusters not chosen", passing-selected, passing) + refusedNote(refused)
	}
	return condition(p, now, clusterv1beta1.PlacementConditionSatisfied, status, reason, msg)
}

func misconfigured(p *clusterv1beta1.Placement, now time.Time, err error) Result {
	msg := err.Error()
	var ce *framework.ConfigError
	if errors.As(err, &ce) {
		msg = fmt.Sprintf("Placement %s/%s: %s", p.Namespace, p.Name, ce.Error())
	}
	return Result{Misconfigured: true, Conditions: []metav1.Condition{condition(p, now,
		clusterv1beta1.PlacementConditionMisconfigured, metav1.ConditionTrue, clusterv1beta1.PlacementReasonMisconfigured, msg)}}
}

func condition(p *clusterv1beta1.Placement, now time.Time, typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: p.Generation, LastTransitionTime: metav1.NewTime(now)}
}

func joinMsg(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// noMatchNote is what the filters that explain a fleet-wide mismatch (framework.NoMatchExplainer)
// say when no candidate passed, each after "; ".
func noMatchNote(filters []framework.FilterPlugin, candidates []*clusterv1.ManagedCluster) string {
	var b strings.Builder
	for _, f := range filters {
		if e, ok := f.(framework.NoMatchExplainer); ok {
			if m := e.NoMatch(candidates); m != "" {
				b.WriteString("; " + m)
			}
		}
	}
	return b.String()
}

// refusedNote says how many qualifying clusters each select plugin refused, "" for none.
func refusedNote(refused map[string]int) string {
	names := make([]string, 0, len(refused))
	for n := range refused {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "; %d not chosen by %s (see each cluster's explanation)", refused[n], n)
	}
	return b.String()
}

// mergeByName merges two explanation lists sorted by name (clusterset sorts both the candidates
// and the excluded) into one sorted by name, without sorting 10,000 large structs again.
func mergeByName(a, b []ClusterExplanation) []ClusterExplanation {
	if len(a) == 0 {
		return b
	}
	out := make([]ClusterExplanation, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if b[0].Name < a[0].Name {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

// rank sorts the candidates by (demoted, total desc, name asc). passing is in name order (the
// candidates come sorted by name), so the position stands for the name; each candidate's order
// is packed into one integer, (demoted, -total, position), sorted without a comparison function.
func rank(passing []*candidate) { rankTop(passing, len(passing)) }

// rankTop puts the first k candidates of rank order, in that order, at the front of passing;
// the rest follow in no particular order. Selecting k of n costs n log k, not n log n.
func rankTop(passing []*candidate, k int) {
	const posBits, totalBits = 24, 37 // 16 million clusters; totals within ±2^36
	const bias = int64(1) << (totalBits - 1)
	if k <= 0 {
		return
	}
	keys := make([]int64, len(passing))
	packed := len(passing) < 1<<posBits
	for i, cd := range passing {
		t := -cd.expl.TotalScore
		if t <= -bias || t >= bias {
			packed = false
			break
		}
		key := (t+bias)<<posBits | int64(i)
		if cd.demoted {
			key |= 1 << (totalBits + posBits)
		}
		keys[i] = key
	}
	if !packed { // totals this large need more than a weight of 10 times a score of 100
		rankSlow(passing)
		return
	}
	if k < len(keys)/4 {
		keys = smallest(keys, k)
	}
	slices.Sort(keys)
	ranked := make([]*candidate, 0, len(passing))
	for _, key := range keys {
		ranked = append(ranked, passing[key&(1<<posBits-1)])
	}
	if len(ranked) < len(passing) {
		top := make([]bool, len(passing))
		for _, key := range keys {
			top[key&(1<<posBits-1)] = true
		}
		for i, cd := range passing {
			if !top[i] {
				ranked = append(ranked, cd)
			}
		}
	}
	copy(passing, ranked)
}

// smallest returns the k smallest of keys (distinct), in no order, with a max-heap of k.
func smallest(keys []int64, k int) []int64 {
	h := slices.Clone(keys[:k])
	down := func(i int) {
		for {
			l, big := 2*i+1, i
			if l < k && h[l] > h[big] {
				big = l
			}
			if r := l + 1; r < k && h[r] > h[big] {
				big = r
			}
			if big == i {
				return
			}
			h[i], h[big] = h[big], h[i]
			i = big
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, key := range keys[k:] {
		if key < h[0] {
			h[0] = key
			down(0)
		}
	}
	return h
}

func rankSlow(passing []*candidate) {
	slices.SortStableFunc(passing, func(a, b *candidate) int {
		if a.demoted != b.demoted {
			if a.demoted {
				return 1
			}
			return -1
		}
		return cmp.Compare(b.expl.TotalScore, a.expl.TotalScore)
	})
}
