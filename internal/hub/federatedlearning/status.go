package federatedlearning

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
)

// Condition types (Flotilla's; OCM's controller writes only the phase).
const (
	ConditionServerReady  = "ServerReady"
	ConditionClientsReady = "ClientsReady"
	ConditionTraining     = "Training"
	ConditionSucceeded    = "Succeeded"
	ConditionFailed       = "Failed"
)

// Reasons.
const (
	ReasonInvalidSpec       = "InvalidSpec"
	ReasonNameConflict      = "NameConflict"
	ReasonNotEnoughClusters = "NotEnoughClusters"
	ReasonQuorumLost        = "QuorumLost"
	ReasonServerFailed      = "ServerFailed"
	ReasonMissingClaim      = "MissingClaim"
	// ReasonSuperLinkRefused: the hub will not send requests to spec.server.superlink (a
	// loopback, link-local or metadata address, a redirect); ServerReady says why.
	ReasonSuperLinkRefused = "SuperLinkRefused"
	// ReasonSuperNodesNotRegistered: the hub could not register the client clusters' SuperNode
	// keys with the federation's own SuperLink, which admits no other SuperNode.
	ReasonSuperNodesNotRegistered = "SuperNodesNotRegistered"
)

// maxTimeline bounds status.timeline (the CRD's MaxItems).
const maxTimeline = 64

// client is what the controller found of one decided cluster's client.
type clientState struct {
	// Delivered: its client objects exist on the hub (ManifestWorks); Applied: the cluster
	// applied them.
	Delivered, Applied bool
	// Excluded, with Reason and Message: it may not get a client.
	Excluded        bool
	Reason, Message string
	// DataPath is the value of the cluster's data claim ("" without one).
	DataPath string
}

// observed is everything the status is computed from; computeStatus has no other input.
type observed struct {
	Now        metav1.Time
	SpecErrors []string
	// Decided are the clusters the placement chose, sorted; Clients what became of each.
	Decided []string
	Clients map[string]clientState
	// ServerReady with ServerMessage: the server runs (Flower: the ServerApp is available;
	// OpenFL: its Job is created and its listener has an address).
	ServerReady   bool
	ServerReason  string
	ServerMessage string
	// ServerSucceeded / ServerFailed: the OpenFL server Job ended (ServerFailure says how).
	ServerSucceeded, ServerFailed bool
	ServerFailure                 string
	// Conflicts name objects of the controller's names that are not the FederatedLearning's.
	Conflicts []string
	// Hint is appended to the not-enough-clusters message (clusters where flower-addon is off).
	Hint     string
	Progress *Progress
	// RunID is the Flower run Progress was read from (decimal), "" when none.
	RunID string
	// ServerListener is where listeners[0] is reached, once known (OpenFL).
	ServerListener *flv1alpha1.ListenerStatus
}

// minClients is spec.server.minAvailableClients, at least 1.
func minClients(fl *flv1alpha1.FederatedLearning) int {
	return max(int(fl.Spec.Server.MinAvailableClients), 1)
}

// computeStatus is the FederatedLearning's next status: OCM's phase and message, Flotilla's
// conditions, clients, progress and timeline. It is pure: the previous status is read from fl.
func computeStatus(fl *flv1alpha1.FederatedLearning, o observed) flv1alpha1.FederatedLearningStatus {
	prev := fl.Status
	st := *prev.DeepCopy()
	// A terminal phase stays, except a spec error once the spec has changed.
	if terminal(fl) {
		return st
	}
	w := statusWriter{st: &st, now: o.Now, gen: fl.Generation}
	want := minClients(fl)
	running := w.clients(o, want)
	if o.ServerListener != nil {
		st.Listeners = []flv1alpha1.ListenerStatus{*o.ServerListener}
	}
	// The first run found is the federation's for good (FlowerRuns reads only it afterwards).
	if st.FlowerRunID == "" && o.RunID != "" {
		st.FlowerRunID = o.RunID
		w.event("RunBound", "", fmt.Sprintf("Flower run %s names this federation in its run config: progress and the end of training are read from it only", o.RunID))
	}
	if p := o.Progress; p != nil && p.Seen {
		st.Progress = w.progress(fl, p)
	}
	phase, msg, failedReason := decidePhase(o, prev.Phase, want)
	if phase == flv1alpha1.PhaseFailed {
		w.set(ConditionFailed, true, failedReason, msg)
	} else {
		w.set(ConditionFailed, false, "NotFailed", "")
	}
	w.conditions(o, phase, msg, running, want)
	if phase != prev.Phase {
		w.event(string(phase), "", msg)
	}
	st.Phase, st.Message = phase, msg
	if n := len(st.Timeline); n > maxTimeline {
		st.Timeline = st.Timeline[n-maxTimeline:]
	}
	return st
}

// statusWriter writes conditions and timeline entries into the status being computed, at the
// observation's time and the FederatedLearning's generation.
type statusWriter struct {
	st  *flv1alpha1.FederatedLearningStatus
	now metav1.Time
	gen int64
}

// set sets condition t, True when ok.
func (w statusWriter) set(t string, ok bool, reason, msg string) {
	s := metav1.ConditionFalse
	if ok {
		s = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&w.st.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: w.gen, LastTransitionTime: w.now})
}

// event adds a timeline entry.
func (w statusWriter) event(ev, cluster, msg string) {
	w.st.Timeline = append(w.st.Timeline, flv1alpha1.TimelineEntry{Time: w.now, Event: ev, Cluster: cluster, Message: msg})
}

// clients writes the clients' states and the events of those delivered and lost, and returns
// how many run.
func (w statusWriter) clients(o observed, want int) int {
	clients, lost, delivered := clientStatuses(w.st.Clients, o)
	w.st.Clients = clients
	running := len(clientsIn(clients, flv1alpha1.ClientRunning))
	for _, c := range delivered {
		w.event("ClientDelivered", c, "client applied on "+c)
	}
	for _, c := range lost {
		if running >= want {
			w.event("ClientLost", c, fmt.Sprintf("%s is no longer decided or available; %d clients remain, the quorum of %d is met: training goes on", c, running, want))
		} else {
			w.event("ClientLost", c, fmt.Sprintf("%s is no longer decided or available; %d clients remain, below the quorum of %d: waiting for the placement to choose a replacement", c, running, want))
		}
	}
	return running
}

// progress is the training progress p shows, with an event when a new round was aggregated;
// UpdatedAt moves only with the round.
func (w statusWriter) progress(fl *flv1alpha1.FederatedLearning, p *Progress) *flv1alpha1.TrainingProgress {
	prev := fl.Status.Progress
	prog := &flv1alpha1.TrainingProgress{Round: p.Round, Rounds: p.Rounds, Metrics: p.Metrics, UpdatedAt: &w.now}
	if prog.Rounds == 0 {
		prog.Rounds = fl.Spec.Server.Rounds
	}
	rounds := make([]int32, 0, len(p.RoundClients))
	for r := range p.RoundClients {
		rounds = append(rounds, r)
	}
	sort.Slice(rounds, func(i, j int) bool { return rounds[i] < rounds[j] })
	for _, r := range rounds {
		prog.RoundClients = append(prog.RoundClients, flv1alpha1.RoundClients{Round: r, Clusters: p.RoundClients[r]})
	}
	if prog.Round >= 1 && (prev == nil || prev.Round < prog.Round) {
		msg := fmt.Sprintf("round %d of %d aggregated", prog.Round, prog.Rounds)
		if cs := p.RoundClients[prog.Round]; len(cs) > 0 {
			msg += " with updates from " + strings.Join(cs, ", ")
		}
		w.event("RoundAggregated", "", msg)
	} else if prev != nil && prev.Round == prog.Round && prev.UpdatedAt != nil {
		prog.UpdatedAt = prev.UpdatedAt
	}
	return prog
}

// decidePhase is the federation's phase and its message, and for Failed the reason of
// condition Failed.
func decidePhase(o observed, prev flv1alpha1.FederatedLearningPhase, want int) (flv1alpha1.FederatedLearningPhase, string, string) {
	switch {
	case len(o.SpecErrors) > 0:
		return flv1alpha1.PhaseFailed, strings.Join(o.SpecErrors, "; "), ReasonInvalidSpec
	case o.ServerFailed || (o.Progress != nil && o.Progress.Failed != ""):
		msg := o.ServerFailure
		if msg == "" {
			msg = o.Progress.Failed
		}
		return flv1alpha1.PhaseFailed, msg, ReasonServerFailed
	case o.ServerSucceeded || (o.Progress != nil && o.Progress.Finished):
		return flv1alpha1.PhaseCompleted, "Model training successful. Check storage for details", ""
	case len(o.Conflicts) > 0:
		return flv1alpha1.PhaseWaiting, strings.Join(o.Conflicts, "; "), ""
	case len(o.Decided) < want && prev != flv1alpha1.PhaseRunning:
		msg := fmt.Sprintf("Expected %d clusters, but only %d meet the criteria", want, len(o.Decided))
		if o.Hint != "" {
			msg += "; " + o.Hint
		}
		return flv1alpha1.PhaseWaiting, msg, ""
	case allDelivered(o) && len(o.Decided) >= want || prev == flv1alpha1.PhaseRunning:
		return flv1alpha1.PhaseRunning, fmt.Sprintf("Assigned %d clusters for client execution in model training", len(o.Decided)), ""
	default:
		return flv1alpha1.PhaseWaiting, "Awaiting server and client readiness", ""
	}
}

// conditions sets ServerReady, ClientsReady, Training and Succeeded for phase.
func (w statusWriter) conditions(o observed, phase flv1alpha1.FederatedLearningPhase, msg string, running, want int) {
	switch {
	case len(o.Conflicts) > 0:
		w.set(ConditionServerReady, false, ReasonNameConflict, strings.Join(o.Conflicts, "; "))
	case o.ServerReady:
		w.set(ConditionServerReady, true, "ServerRunning", o.ServerMessage)
	default:
		w.set(ConditionServerReady, false, nonEmpty(o.ServerReason, "ServerNotReady"), o.ServerMessage)
	}

	switch {
	case running >= want:
		w.set(ConditionClientsReady, true, "QuorumMet", fmt.Sprintf("%d clients running (%s), at least %d needed", running, strings.Join(clientsIn(w.st.Clients, flv1alpha1.ClientRunning), ", "), want))
	case len(o.Decided) < want:
		m := fmt.Sprintf("Expected %d clusters, but only %d meet the criteria: spec.server.minAvailableClients is %d; widen spec.client.placement or lower minAvailableClients", want, len(o.Decided), want)
		if o.Hint != "" {
			m += "; " + o.Hint
		}
		w.set(ConditionClientsReady, false, ReasonNotEnoughClusters, m)
	default:
		w.set(ConditionClientsReady, false, "ClientsPending", fmt.Sprintf("%d of %d clients running, %d needed", running, len(o.Decided), want))
	}

	switch {
	case phase == flv1alpha1.PhaseCompleted:
		w.set(ConditionTraining, false, "TrainingEnded", "training ended")
		w.set(ConditionSucceeded, true, "ModelTrained", msg)
	case phase == flv1alpha1.PhaseFailed:
		w.set(ConditionTraining, false, "TrainingEnded", "training stopped: "+msg)
		w.set(ConditionSucceeded, false, "Failed", msg)
	case phase == flv1alpha1.PhaseRunning && running < want:
		w.set(ConditionTraining, false, ReasonQuorumLost, fmt.Sprintf("%d clients running, below spec.server.minAvailableClients %d: rounds wait until the placement chooses a replacement", running, want))
		w.set(ConditionSucceeded, false, "NotFinished", "training has not finished")
	case phase == flv1alpha1.PhaseRunning:
		m := "training"
		if w.st.Progress != nil {
			m = fmt.Sprintf("round %d of %d aggregated", w.st.Progress.Round, w.st.Progress.Rounds)
		}
		w.set(ConditionTraining, true, "Training", m)
		w.set(ConditionSucceeded, false, "NotFinished", "training has not finished")
	default:
		w.set(ConditionTraining, false, "NotStarted", msg)
		w.set(ConditionSucceeded, false, "NotFinished", "training has not started")
	}
}

// terminal says whether fl's phase is final: Completed, or Failed other than by a spec error
// that the current generation may have fixed.
func terminal(fl *flv1alpha1.FederatedLearning) bool {
	switch fl.Status.Phase {
	case flv1alpha1.PhaseCompleted:
		return true
	case flv1alpha1.PhaseFailed:
		c := meta.FindStatusCondition(fl.Status.Conditions, ConditionFailed)
		return c == nil || c.Reason != ReasonInvalidSpec || c.ObservedGeneration == fl.Generation
	}
	return false
}

// clientStatuses merges the decided clusters into the previous client list: clusters that ran a
// client and are no longer decided are Lost; it returns the clusters that became Lost and those
// whose client became Running.
func clientStatuses(prev []flv1alpha1.ClientStatus, o observed) (out []flv1alpha1.ClientStatus, lost, delivered []string) {
	old := map[string]flv1alpha1.ClientStatus{}
	for _, c := range prev {
		old[c.Cluster] = c
	}
	decided := map[string]bool{}
	for _, name := range o.Decided {
		decided[name] = true
		c := o.Clients[name]
		s := flv1alpha1.ClientStatus{Cluster: name, State: flv1alpha1.ClientPending, Reason: "Delivering", Message: "client being delivered"}
		p, hadPrev := old[name]
		switch {
		case c.Excluded && hadPrev && (p.State == flv1alpha1.ClientRunning || p.State == flv1alpha1.ClientLost):
			// A client that ran here and may no longer (its claim is gone, say) is lost.
			s.State, s.Reason, s.Message = flv1alpha1.ClientLost, c.Reason, c.Message
			if p.State == flv1alpha1.ClientRunning {
				lost = append(lost, name)
			}
		case c.Excluded:
			s.State, s.Reason, s.Message = flv1alpha1.ClientExcluded, c.Reason, c.Message
		case c.Applied:
			s.State, s.Reason, s.Message = flv1alpha1.ClientRunning, "Applied", "client applied on the cluster"
		case c.Delivered:
			s.Reason, s.Message = "Delivered", "client delivered; the cluster has not applied it yet"
		}
		if hadPrev && p.State == s.State && p.Since != nil {
			s.Since = p.Since
		} else {
			s.Since = &o.Now
			if s.State == flv1alpha1.ClientRunning {
				delivered = append(delivered, name)
			}
		}
		out = append(out, s)
	}
	for _, p := range prev {
		if decided[p.Cluster] {
			continue
		}
		switch p.State {
		case flv1alpha1.ClientRunning, flv1alpha1.ClientPending:
			if p.State == flv1alpha1.ClientRunning {
				lost = append(lost, p.Cluster)
			}
			out = append(out, flv1alpha1.ClientStatus{Cluster: p.Cluster, State: flv1alpha1.ClientLost, Reason: "NotDecided",
				Message: "the placement no longer chooses this cluster (lost, unavailable or no longer matching); its client is removed", Since: &o.Now})
		case flv1alpha1.ClientLost:
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
	if len(out) > 1000 {
		out = out[:1000]
	}
	return out, lost, delivered
}

// allDelivered: every decided cluster that may have a client has one.
func allDelivered(o observed) bool {
	n := 0
	for _, name := range o.Decided {
		c := o.Clients[name]
		if c.Excluded {
			continue
		}
		if !c.Delivered {
			return false
		}
		n++
	}
	return n > 0
}

func clientsIn(cs []flv1alpha1.ClientStatus, state flv1alpha1.ClientState) []string {
	var out []string
	for _, c := range cs {
		if c.State == state {
			out = append(out, c.Cluster)
		}
	}
	return out
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
