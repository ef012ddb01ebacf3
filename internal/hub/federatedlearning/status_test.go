package federatedlearning

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
)

var t0 = metav1.NewTime(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))

type statusSummary struct {
	Phase      flv1alpha1.FederatedLearningPhase
	Message    string
	Conditions map[string]string // type -> status/reason
	Clients    map[string]flv1alpha1.ClientState
	Events     []string
}

func summarize(st flv1alpha1.FederatedLearningStatus) statusSummary {
	s := statusSummary{Phase: st.Phase, Message: st.Message, Conditions: map[string]string{}, Clients: map[string]flv1alpha1.ClientState{}}
	for _, c := range st.Conditions {
		s.Conditions[c.Type] = string(c.Status) + "/" + c.Reason
	}
	for _, c := range st.Clients {
		s.Clients[c.Cluster] = c.State
	}
	for _, e := range st.Timeline {
		s.Events = append(s.Events, e.Event+":"+e.Cluster)
	}
	return s
}

func running(names ...string) map[string]clientState {
	m := map[string]clientState{}
	for _, n := range names {
		m[n] = clientState{Delivered: true, Applied: true}
	}
	return m
}

func TestComputeStatus(t *testing.T) {
	runningStatus := flv1alpha1.FederatedLearningStatus{Phase: flv1alpha1.PhaseRunning, Clients: []flv1alpha1.ClientStatus{
		{Cluster: "a", State: flv1alpha1.ClientRunning, Since: &t0}, {Cluster: "b", State: flv1alpha1.ClientRunning, Since: &t0},
		{Cluster: "c", State: flv1alpha1.ClientRunning, Since: &t0},
	}}
	cases := map[string]struct {
		fl   *flv1alpha1.FederatedLearning
		o    observed
		want statusSummary
	}{
		"too few clusters: OCM's message": {
			fl: makeFL("x").MinClients(3).Obj(),
			o:  observed{Decided: []string{"a"}, Clients: running(), Hint: "flower-addon is not available on 1 cluster (z)"},
			want: statusSummary{Phase: flv1alpha1.PhaseWaiting,
				Message:    "Expected 3 clusters, but only 1 meet the criteria; flower-addon is not available on 1 cluster (z)",
				Conditions: map[string]string{"ClientsReady": "False/NotEnoughClusters", "Failed": "False/NotFailed", "ServerReady": "False/ServerNotReady", "Succeeded": "False/NotFinished", "Training": "False/NotStarted"},
				Clients:    map[string]flv1alpha1.ClientState{"a": flv1alpha1.ClientPending},
				Events:     []string{"Waiting:"}},
		},
		"enough clusters, clients applied: Running": {
			fl: makeFL("x").Obj(),
			o:  observed{Decided: []string{"a", "b"}, Clients: running("a", "b"), ServerReady: true},
			want: statusSummary{Phase: flv1alpha1.PhaseRunning, Message: "Assigned 2 clusters for client execution in model training",
				Conditions: map[string]string{"ClientsReady": "True/QuorumMet", "Failed": "False/NotFailed", "ServerReady": "True/ServerRunning", "Succeeded": "False/NotFinished", "Training": "True/Training"},
				Clients:    map[string]flv1alpha1.ClientState{"a": flv1alpha1.ClientRunning, "b": flv1alpha1.ClientRunning},
				Events:     []string{"ClientDelivered:a", "ClientDelivered:b", "Running:"}},
		},
		"a client lost with the quorum kept": {
			fl: makeFL("x").ReplaceStatus(runningStatus).Obj(),
			o:  observed{Decided: []string{"a", "b"}, Clients: running("a", "b"), ServerReady: true},
			want: statusSummary{Phase: flv1alpha1.PhaseRunning, Message: "Assigned 2 clusters for client execution in model training",
				Conditions: map[string]string{"ClientsReady": "True/QuorumMet", "Failed": "False/NotFailed", "ServerReady": "True/ServerRunning", "Succeeded": "False/NotFinished", "Training": "True/Training"},
				Clients:    map[string]flv1alpha1.ClientState{"a": flv1alpha1.ClientRunning, "b": flv1alpha1.ClientRunning, "c": flv1alpha1.ClientLost},
				Events:     []string{"ClientLost:c"}},
		},
		"below the quorum: Running, Training False until a replacement": {
			fl: makeFL("x").MinClients(3).ReplaceStatus(runningStatus).Obj(),
			o:  observed{Decided: []string{"a", "b"}, Clients: running("a", "b"), ServerReady: true},
			want: statusSummary{Phase: flv1alpha1.PhaseRunning, Message: "Assigned 2 clusters for client execution in model training",
				Conditions: map[string]string{"ClientsReady": "False/NotEnoughClusters", "Failed": "False/NotFailed", "ServerReady": "True/ServerRunning", "Succeeded": "False/NotFinished", "Training": "False/QuorumLost"},
				Clients:    map[string]flv1alpha1.ClientState{"a": flv1alpha1.ClientRunning, "b": flv1alpha1.ClientRunning, "c": flv1alpha1.ClientLost},
				Events:     []string{"ClientLost:c"}},
		},
		"replacement delivered": {
			fl: makeFL("x").MinClients(3).ReplaceStatus(runningStatus).Obj(),
			o:  observed{Decided: []string{"a", "b", "d"}, Clients: running("a", "b", "d"), ServerReady: true},
			want: statusSummary{Phase: flv1alpha1.PhaseRunning, Message: "Assigned 3 clusters for client execution in model training",
				Conditions: map[string]string{"ClientsReady": "True/QuorumMet", "Failed": "False/NotFailed", "ServerReady": "True/ServerRunning", "Succeeded": "False/NotFinished", "Training": "True/Training"},
				Clients:    map[string]flv1alpha1.ClientState{"a": flv1alpha1.ClientRunning, "b": flv1alpha1.ClientRunning, "c": flv1alpha1.ClientLost, "d": flv1alpha1.ClientRunning},
				Events:     []string{"ClientDelivered:d", "ClientLost:c"}},
		},
		"a running client's claim gone before the placement drops it: Lost, not Excluded": {
			fl: makeFL("x").ReplaceStatus(runningStatus).Obj(),
			o: observed{Decided: []string{"a", "b", "c"}, ServerReady: true, Clients: map[string]clientState{
				"a": {Delivered: true, Applied: true}, "b": {Delivered: true, Applied: true}, "c": {Excluded: true, Reason: ReasonMissingClaim}}},
			want: statusSummary{Phase: flv1alpha1.PhaseRunning, Message: "Assigned 3 clusters for client execution in model training",
				Conditions: map[string]string{"ClientsReady": "True/QuorumMet", "Failed": "False/NotFailed", "ServerReady": "True/ServerRunning", "Succeeded": "False/NotFinished", "Training": "True/Training"},
				Clients:    map[string]flv1alpha1.ClientState{"a": flv1alpha1.ClientRunning, "b": flv1alpha1.ClientRunning, "c": flv1alpha1.ClientLost},
				Events:     []string{"ClientLost:c"}},
		},
		"spec error: Failed naming the field": {
			fl: makeFL("x").Obj(),
			o:  observed{SpecErrors: []string{"spec.server.image is empty: set the server's container image"}},
			want: statusSummary{Phase: flv1alpha1.PhaseFailed, Message: "spec.server.image is empty: set the server's container image",
				Conditions: map[string]string{"ClientsReady": "False/NotEnoughClusters", "Failed": "True/InvalidSpec", "ServerReady": "False/ServerNotReady", "Succeeded": "False/Failed", "Training": "False/TrainingEnded"},
				Clients:    map[string]flv1alpha1.ClientState{},
				Events:     []string{"Failed:"}},
		},
		"server job succeeded: OCM's Completed": {
			fl: makeFL("x").Framework(flv1alpha1.FrameworkOpenFL).ReplaceStatus(runningStatus).Obj(),
			o:  observed{Decided: []string{"a", "b", "c"}, Clients: running("a", "b", "c"), ServerReady: true, ServerSucceeded: true},
			want: statusSummary{Phase: flv1alpha1.PhaseCompleted, Message: "Model training successful. Check storage for details",
				Conditions: map[string]string{"ClientsReady": "True/QuorumMet", "Failed": "False/NotFailed", "ServerReady": "True/ServerRunning", "Succeeded": "True/ModelTrained", "Training": "False/TrainingEnded"},
				Clients:    map[string]flv1alpha1.ClientState{"a": flv1alpha1.ClientRunning, "b": flv1alpha1.ClientRunning, "c": flv1alpha1.ClientRunning},
				Events:     []string{"Completed:"}},
		},
		"a cluster without the claim is excluded": {
			fl: makeFL("x").MinClients(1).Obj(),
			o: observed{Decided: []string{"a", "edge"}, ServerReady: true, Clients: map[string]clientState{
				"a": {Delivered: true, Applied: true}, "edge": {Excluded: true, Reason: ReasonMissingClaim, Message: "no claim"}}},
			want: statusSummary{Phase: flv1alpha1.PhaseRunning, Message: "Assigned 2 clusters for client execution in model training",
				Conditions: map[string]string{"ClientsReady": "True/QuorumMet", "Failed": "False/NotFailed", "ServerReady": "True/ServerRunning", "Succeeded": "False/NotFinished", "Training": "True/Training"},
				Clients:    map[string]flv1alpha1.ClientState{"a": flv1alpha1.ClientRunning, "edge": flv1alpha1.ClientExcluded},
				Events:     []string{"ClientDelivered:a", "Running:"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.o.Now = t0
			if diff := cmp.Diff(tc.want, summarize(computeStatus(tc.fl, tc.o))); diff != "" {
				t.Errorf("computeStatus (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTerminalPhasesStay(t *testing.T) {
	done := makeFL("x").ReplaceStatus(flv1alpha1.FederatedLearningStatus{Phase: flv1alpha1.PhaseCompleted, Message: "done"}).Obj()
	st := computeStatus(done, observed{Now: t0, ServerFailed: true, ServerFailure: "boom"})
	if st.Phase != flv1alpha1.PhaseCompleted {
		t.Errorf("a Completed federation became %s", st.Phase)
	}
	// A spec error is tried again once the spec changed.
	bad := makeFL("x").Obj()
	bad.Status = computeStatus(bad, observed{Now: t0, SpecErrors: []string{"spec.server.image is empty"}})
	if !terminal(bad) {
		t.Fatalf("a spec error of the current generation should hold")
	}
	bad.Generation++
	if terminal(bad) {
		t.Errorf("a spec error of an older generation should be tried again")
	}
	if c := meta.FindStatusCondition(bad.Status.Conditions, ConditionFailed); c == nil || c.ObservedGeneration != 1 {
		t.Errorf("Failed condition without observedGeneration: %+v", c)
	}
}

func TestProgressInStatus(t *testing.T) {
	fl := makeFL("x").ReplaceStatus(flv1alpha1.FederatedLearningStatus{Phase: flv1alpha1.PhaseRunning}).Obj()
	p := ParseProgress(`FLOTILLA_PROGRESS {"round":2,"rounds":3,"clients":["b","a"],"metrics":{"accuracy":0.9}}`)
	st := computeStatus(fl, observed{Now: t0, Decided: []string{"a", "b"}, Clients: running("a", "b"), ServerReady: true, Progress: &p})
	want := &flv1alpha1.TrainingProgress{Round: 2, Rounds: 3, Metrics: map[string]string{"accuracy": "0.9"},
		RoundClients: []flv1alpha1.RoundClients{{Round: 2, Clusters: []string{"a", "b"}}}, UpdatedAt: &t0}
	if diff := cmp.Diff(want, st.Progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if c := meta.FindStatusCondition(st.Conditions, ConditionTraining); c == nil || c.Message != "round 2 of 3 aggregated" {
		t.Errorf("Training condition = %+v, want round 2 of 3", c)
	}
}
