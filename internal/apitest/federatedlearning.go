package apitest

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
)

// FederatedLearningWrapper builds a FederatedLearning.
type FederatedLearningWrapper struct {
	flv1alpha1.FederatedLearning
}

// MakeFederatedLearning is a FederatedLearning with only its namespace and name: no framework,
// images or rounds, and no status.
func MakeFederatedLearning(namespace, name string) *FederatedLearningWrapper {
	return &FederatedLearningWrapper{flv1alpha1.FederatedLearning{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}}
}

// Obj is a deep copy of the FederatedLearning built so far.
func (w *FederatedLearningWrapper) Obj() *flv1alpha1.FederatedLearning { return w.DeepCopy() }

// UID sets the object's UID.
func (w *FederatedLearningWrapper) UID(uid types.UID) *FederatedLearningWrapper {
	w.ObjectMeta.UID = uid
	return w
}

// Generation sets the object's metadata.generation.
func (w *FederatedLearningWrapper) Generation(g int64) *FederatedLearningWrapper {
	w.ObjectMeta.Generation = g
	return w
}

// Created sets the object's creation time.
func (w *FederatedLearningWrapper) Created(at time.Time) *FederatedLearningWrapper {
	w.CreationTimestamp = metav1.NewTime(at)
	return w
}

// Label sets label key to value.
func (w *FederatedLearningWrapper) Label(key, value string) *FederatedLearningWrapper {
	setLabel(&w.ObjectMeta, key, value)
	return w
}

// Framework sets spec.framework.
func (w *FederatedLearningWrapper) Framework(f flv1alpha1.Framework) *FederatedLearningWrapper {
	w.Spec.Framework = f
	return w
}

// ServerImage sets the server's image.
func (w *FederatedLearningWrapper) ServerImage(image string) *FederatedLearningWrapper {
	w.Spec.Server.Image = image
	return w
}

// ClientImage sets the clients' image.
func (w *FederatedLearningWrapper) ClientImage(image string) *FederatedLearningWrapper {
	w.Spec.Client.Image = image
	return w
}

// Rounds sets the rounds the server runs.
func (w *FederatedLearningWrapper) Rounds(n int32) *FederatedLearningWrapper {
	w.Spec.Server.Rounds = n
	return w
}

// MinClients sets the server's minAvailableClients.
func (w *FederatedLearningWrapper) MinClients(n int32) *FederatedLearningWrapper {
	w.Spec.Server.MinAvailableClients = n
	return w
}

// Flower sets the Flower SuperLink the server uses and the SuperNode the clients use.
func (w *FederatedLearningWrapper) Flower(superlink, supernode string) *FederatedLearningWrapper {
	w.Spec.Server.SuperLink, w.Spec.Client.SuperNode = superlink, supernode
	return w
}

// Listener adds a server listener.
func (w *FederatedLearningWrapper) Listener(l flv1alpha1.ListenerSpec) *FederatedLearningWrapper {
	w.Spec.Server.Listeners = append(w.Spec.Server.Listeners, l)
	return w
}

// Storage sets where the server stores the model.
func (w *FederatedLearningWrapper) Storage(s flv1alpha1.ModelStorageSpec) *FederatedLearningWrapper {
	w.Spec.Server.Storage = s
	return w
}

// ClusterSets sets the client placement's cluster sets.
func (w *FederatedLearningWrapper) ClusterSets(sets ...string) *FederatedLearningWrapper {
	w.Spec.Client.Placement.ClusterSets = sets
	return w
}

// Clusters sets the client placement's numberOfClusters.
func (w *FederatedLearningWrapper) Clusters(n int32) *FederatedLearningWrapper {
	w.Spec.Client.Placement.NumberOfClusters = &n
	return w
}

// Claim adds a client placement predicate whose claim selector requires key with op (and values).
func (w *FederatedLearningWrapper) Claim(key string, op metav1.LabelSelectorOperator, values ...string) *FederatedLearningWrapper {
	w.Spec.Client.Placement.Predicates = append(w.Spec.Client.Placement.Predicates, clusterv1beta1.ClusterPredicate{
		RequiredClusterSelector: clusterv1beta1.ClusterSelector{ClaimSelector: clusterv1beta1.ClusterClaimSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}},
		}},
	})
	return w
}

// Tolerate makes the client placement tolerate taint key, whatever its value.
func (w *FederatedLearningWrapper) Tolerate(key string) *FederatedLearningWrapper {
	w.Spec.Client.Placement.Tolerations = append(w.Spec.Client.Placement.Tolerations,
		clusterv1beta1.Toleration{Key: key, Operator: clusterv1beta1.TolerationOpExists})
	return w
}

// ReplaceStatus replaces the whole status. (It is not named Status, which would hide the
// object's field.)
func (w *FederatedLearningWrapper) ReplaceStatus(s flv1alpha1.FederatedLearningStatus) *FederatedLearningWrapper {
	w.Status = s
	return w
}

// Phase sets the status's phase and message.
func (w *FederatedLearningWrapper) Phase(p flv1alpha1.FederatedLearningPhase, message string) *FederatedLearningWrapper {
	w.Status.Phase, w.Status.Message = p, message
	return w
}

// Condition adds status conditions as they are.
func (w *FederatedLearningWrapper) Condition(c ...metav1.Condition) *FederatedLearningWrapper {
	w.Status.Conditions = append(w.Status.Conditions, c...)
	return w
}

// Client adds a client on cluster that entered state at since, for reason (with message; both
// may be empty).
func (w *FederatedLearningWrapper) Client(cluster string, state flv1alpha1.ClientState, reason, message string, since time.Time) *FederatedLearningWrapper {
	w.Status.Clients = append(w.Status.Clients, flv1alpha1.ClientStatus{
		Cluster: cluster, State: state, Reason: reason, Message: message, Since: &metav1.Time{Time: since},
	})
	return w
}

// Progress sets the last aggregated round, the rounds the server said it runs (0: not said) and
// metrics as name, value pairs; it has no read time (ProgressRead) and no RoundClients.
func (w *FederatedLearningWrapper) Progress(round, rounds int32, metrics ...string) *FederatedLearningWrapper {
	p := &flv1alpha1.TrainingProgress{Round: round, Rounds: rounds}
	for i := 0; i+1 < len(metrics); i += 2 {
		if p.Metrics == nil {
			p.Metrics = map[string]string{}
		}
		p.Metrics[metrics[i]] = metrics[i+1]
	}
	w.Status.Progress = p
	return w
}

// ProgressRead sets when the controller read the progress; call it after Progress.
func (w *FederatedLearningWrapper) ProgressRead(at time.Time) *FederatedLearningWrapper {
	w.Status.Progress.UpdatedAt = &metav1.Time{Time: at}
	return w
}

// RoundClients records the clusters a round took; call it after Progress.
func (w *FederatedLearningWrapper) RoundClients(round int32, clusters ...string) *FederatedLearningWrapper {
	p := w.Status.Progress
	p.RoundClients = append(p.RoundClients, flv1alpha1.RoundClients{Round: round, Clusters: clusters})
	return w
}

// ListenerStatus adds a listener the server is reachable at.
func (w *FederatedLearningWrapper) ListenerStatus(l flv1alpha1.ListenerStatus) *FederatedLearningWrapper {
	w.Status.Listeners = append(w.Status.Listeners, l)
	return w
}

// Event appends a timeline entry at at.
func (w *FederatedLearningWrapper) Event(at time.Time, event, cluster, message string) *FederatedLearningWrapper {
	w.Status.Timeline = append(w.Status.Timeline,
		flv1alpha1.TimelineEntry{Time: metav1.NewTime(at), Event: event, Cluster: cluster, Message: message})
	return w
}
