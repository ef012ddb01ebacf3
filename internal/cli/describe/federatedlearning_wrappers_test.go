package describe

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
)

type flWrapper struct{ flv1alpha1.FederatedLearning }

// makeFL is a FederatedLearning of framework with images server:1 and client:1; it has no status.
func makeFL(namespace, name string, framework flv1alpha1.Framework, age time.Duration) *flWrapper {
	return &flWrapper{flv1alpha1.FederatedLearning{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, CreationTimestamp: ago(age)},
		Spec: flv1alpha1.FederatedLearningSpec{
			Framework: framework,
			Server:    flv1alpha1.ServerSpec{Image: "registry.example/" + name + "/server:1"},
			Client:    flv1alpha1.ClientSpec{Image: "registry.example/" + name + "/client:1"},
		},
	}}
}

func (w *flWrapper) rounds(rounds, minClients int32) *flWrapper {
	w.Spec.Server.Rounds, w.Spec.Server.MinAvailableClients = rounds, minClients
	return w
}

// placement sets the client placement's cluster sets and number of clusters (0: unset).
func (w *flWrapper) placement(n int32, sets ...string) *flWrapper {
	w.Spec.Client.Placement.ClusterSets = sets
	if n > 0 {
		w.Spec.Client.Placement.NumberOfClusters = ptr.To(n)
	}
	return w
}

// claim adds a predicate whose claim selector requires key with op (and values).
func (w *flWrapper) claim(key string, op metav1.LabelSelectorOperator, values ...string) *flWrapper {
	w.Spec.Client.Placement.Predicates = append(w.Spec.Client.Placement.Predicates, clusterv1beta1.ClusterPredicate{
		RequiredClusterSelector: clusterv1beta1.ClusterSelector{ClaimSelector: clusterv1beta1.ClusterClaimSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}},
		}},
	})
	return w
}

func (w *flWrapper) flower(superlink, supernode string) *flWrapper {
	w.Spec.Server.SuperLink, w.Spec.Client.SuperNode = superlink, supernode
	return w
}

func (w *flWrapper) listener(l flv1alpha1.ListenerSpec) *flWrapper {
	w.Spec.Server.Listeners = append(w.Spec.Server.Listeners, l)
	return w
}

func (w *flWrapper) storage(s flv1alpha1.ModelStorageSpec) *flWrapper {
	w.Spec.Server.Storage = s
	return w
}

func (w *flWrapper) phase(p flv1alpha1.FederatedLearningPhase, message string) *flWrapper {
	w.Status.Phase, w.Status.Message = p, message
	return w
}

func (w *flWrapper) condition(c metav1.Condition) *flWrapper {
	w.Status.Conditions = append(w.Status.Conditions, c)
	return w
}

// client adds a client cluster that entered state d ago.
func (w *flWrapper) client(cluster string, state flv1alpha1.ClientState, reason, message string, d time.Duration) *flWrapper {
	since := ago(d)
	w.Status.Clients = append(w.Status.Clients, flv1alpha1.ClientStatus{Cluster: cluster, State: state, Reason: reason, Message: message, Since: &since})
	return w
}

// progress sets the last aggregated round, the rounds the server said it runs (0: not said),
// when the controller read them, and metrics as name, value pairs.
func (w *flWrapper) progress(round, rounds int32, read time.Duration, metrics ...string) *flWrapper {
	updated := ago(read)
	p := &flv1alpha1.TrainingProgress{Round: round, Rounds: rounds, UpdatedAt: &updated}
	for i := 0; i+1 < len(metrics); i += 2 {
		if p.Metrics == nil {
			p.Metrics = map[string]string{}
		}
		p.Metrics[metrics[i]] = metrics[i+1]
	}
	w.Status.Progress = p
	return w
}

// roundClients records the clusters a round took; call it after progress.
func (w *flWrapper) roundClients(round int32, clusters ...string) *flWrapper {
	w.Status.Progress.RoundClients = append(w.Status.Progress.RoundClients, flv1alpha1.RoundClients{Round: round, Clusters: clusters})
	return w
}

func (w *flWrapper) listenerStatus(l flv1alpha1.ListenerStatus) *flWrapper {
	w.Status.Listeners = append(w.Status.Listeners, l)
	return w
}

// event appends a timeline entry d ago.
func (w *flWrapper) event(d time.Duration, event, cluster, message string) *flWrapper {
	w.Status.Timeline = append(w.Status.Timeline, flv1alpha1.TimelineEntry{Time: ago(d), Event: event, Cluster: cluster, Message: message})
	return w
}

func (w *flWrapper) obj() *flv1alpha1.FederatedLearning { return &w.FederatedLearning }
