package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

// FederatedLearning is a federated training job. Its server (the aggregator) runs on the hub
// for spec.server.rounds rounds, each with at least spec.server.minAvailableClients clients; its
// clients run on the clusters spec.client.placement chooses (typically by a claim saying the
// cluster holds the training data), so that training data never leaves its cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=fl
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="The current phase of the FederatedLearning process"
// +kubebuilder:printcolumn:name="Round",type="integer",JSONPath=".status.progress.round",description="The last aggregated round"
// +kubebuilder:printcolumn:name="Rounds",type="integer",JSONPath=".spec.server.rounds",description="Rounds to run"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type FederatedLearning struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec describes the training: framework, server and clients.
	// +optional
	Spec FederatedLearningSpec `json:"spec,omitempty"`

	// Status reports the phase of the training and where the server listens.
	// +optional
	Status FederatedLearningStatus `json:"status,omitempty"`
}

// Framework is the federated learning framework the server and client images are built on.
//
// +kubebuilder:validation:MaxLength=16
// +kubebuilder:validation:XValidation:rule="self in ['flower', 'openfl', 'other']",message="framework must be flower, openfl or other (other: the images bring their own protocol)"
type Framework string

const (
	// FrameworkFlower is Flower (flwr): a SuperLink on the hub, SuperNodes on the clusters.
	FrameworkFlower Framework = "flower"
	// FrameworkOpenFL is OpenFL: an aggregator on the hub, collaborators on the clusters.
	FrameworkOpenFL Framework = "openfl"
	// FrameworkOther is any other framework; the images bring their own protocol.
	FrameworkOther Framework = "other"
)

// FederatedLearningSpec is the desired training.
//
// +kubebuilder:validation:XValidation:rule="!has(self.server) || !has(self.server.minAvailableClients) || !has(self.client) || !has(self.client.placement) || !has(self.client.placement.numberOfClusters) || self.client.placement.numberOfClusters >= self.server.minAvailableClients",fieldPath=".server.minAvailableClients",message="server.minAvailableClients is more than client.placement.numberOfClusters, so no round could ever start: lower minAvailableClients or raise numberOfClusters"
type FederatedLearningSpec struct {
	// Framework is flower, openfl or other (default).
	// +optional
	// +kubebuilder:default=other
	Framework Framework `json:"framework,omitempty"`

	// Server is the aggregator, run on the hub.
	// +optional
	Server ServerSpec `json:"server,omitempty"`

	// Client is the training client, run on each chosen cluster.
	// +optional
	Client ClientSpec `json:"client,omitempty"`
}

// FederatedLearningPhase is where a training job is in its life.
// +kubebuilder:validation:Enum=Waiting;Running;Completed;Failed;Start
type FederatedLearningPhase string

const (
	// PhaseWaiting: the server waits for enough clients (minAvailableClients) to be chosen.
	PhaseWaiting FederatedLearningPhase = "Waiting"
	// PhaseStart: enough clients are chosen and the server and clients are being started.
	PhaseStart FederatedLearningPhase = "Start"
	// PhaseRunning: training rounds are in progress.
	PhaseRunning FederatedLearningPhase = "Running"
	// PhaseCompleted: every round finished and the model is stored.
	PhaseCompleted FederatedLearningPhase = "Completed"
	// PhaseFailed: the training stopped on an error; status.message says which.
	PhaseFailed FederatedLearningPhase = "Failed"
)

// FederatedLearningStatus is the observed state of a training job.
type FederatedLearningStatus struct {
	// Phase is Waiting (default), Start, Running, Completed or Failed.
	// +optional
	// +kubebuilder:default=Waiting
	Phase FederatedLearningPhase `json:"phase,omitempty"`

	// Message explains the phase in words, for example why the training failed.
	// +optional
	// +kubebuilder:validation:MaxLength=32768
	Message string `json:"message,omitempty"`

	// Listeners are where the server can be reached, one per spec.server.listeners entry.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	Listeners []ListenerStatus `json:"listeners,omitempty"`

	// Conditions say, beyond OCM's phase, what holds the training up: ServerReady, ClientsReady,
	// Training, Succeeded and Failed (Flotilla's; OCM's controller writes none).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Clients are the clusters the placement decided and what became of each: Running (its
	// client is delivered), Pending, Excluded (it may not get one; reason says why) or Lost.
	// +optional
	// +listType=map
	// +listMapKey=cluster
	// +kubebuilder:validation:MaxItems=1000
	Clients []ClientStatus `json:"clients,omitempty"`

	// FlowerRunID is the Flower run the hub bound this federation to (decimal; Flotilla's): the
	// first run submitted to its SuperLink after the federation was created whose run config
	// names the federation's UID (`flwr run ... --run-config 'flotilla-federation="<uid>"'`).
	// Once set it never changes: progress and the end of training are read from this run only.
	// +optional
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^[0-9]+$`
	FlowerRunID string `json:"flowerRunID,omitempty"`

	// Progress is the training's progress as the server reported it, when it reports it.
	// +optional
	Progress *TrainingProgress `json:"progress,omitempty"`

	// Timeline records what happened to the federation and its clients, oldest first; it keeps
	// the last 64 entries.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Timeline []TimelineEntry `json:"timeline,omitempty"`
}

// ClientState is what became of one decided cluster.
type ClientState string

const (
	// ClientPending: the cluster is decided and its client is being delivered.
	ClientPending ClientState = "Pending"
	// ClientRunning: the cluster's client is delivered and applied there.
	ClientRunning ClientState = "Running"
	// ClientExcluded: the cluster may not get a client (reason says why); nothing is sent to it.
	ClientExcluded ClientState = "Excluded"
	// ClientLost: the cluster's client was running and the cluster is no longer available or
	// decided.
	ClientLost ClientState = "Lost"
)

// ClientStatus is one client cluster.
type ClientStatus struct {
	// Cluster is the ManagedCluster's name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Cluster string `json:"cluster"`
	// State is Pending, Running, Excluded or Lost.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	State ClientState `json:"state,omitempty"`
	// Reason is a CamelCase word for the state; Message explains it.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// Since is when the cluster entered this state.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
}

// TrainingProgress is how far the training went, as its server reported it.
type TrainingProgress struct {
	// Round is the last aggregated round; Rounds is how many the server runs.
	// +optional
	Round int32 `json:"round,omitempty"`
	// +optional
	Rounds int32 `json:"rounds,omitempty"`
	// Metrics are the last aggregated metrics (name to value, as the server printed them).
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	Metrics map[string]string `json:"metrics,omitempty"`
	// RoundClients lists, per aggregated round (the last 100), the clusters whose updates it took.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	RoundClients []RoundClients `json:"roundClients,omitempty"`
	// UpdatedAt is when the controller last read progress from the server.
	// +optional
	UpdatedAt *metav1.Time `json:"updatedAt,omitempty"`
}

// RoundClients is the clusters that took part in one round.
type RoundClients struct {
	// Round is the round's number, from 1.
	// +required
	Round int32 `json:"round"`
	// Clusters are the names of the clusters whose updates the round aggregated, sorted.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	// +listType=atomic
	Clusters []string `json:"clusters,omitempty"`
}

// TimelineEntry is one thing that happened.
type TimelineEntry struct {
	// Time is when it happened.
	// +required
	Time metav1.Time `json:"time"`
	// Event is a CamelCase word: PlacementDecided, ClientDelivered, ClientLost, ClientReplaced,
	// QuorumLost, QuorumKept, Running, RunBound, RoundAggregated, Completed, Failed.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Event string `json:"event"`
	// Cluster is the cluster it concerns, if one.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Cluster string `json:"cluster,omitempty"`
	// Message says it in words.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// ListenerStatus is where one server listener can be reached.
type ListenerStatus struct {
	// Name is the listener's name, as in spec.server.listeners.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name,omitempty"`

	// Type is the listener's type: LoadBalancer, NodePort or Route.
	// +optional
	Type ListenerType `json:"type,omitempty"`

	// Address is the host name or IP address clients connect to.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Address string `json:"address,omitempty"`

	// Port is the port clients connect to.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
}

// FederatedLearningList is a list of FederatedLearnings.
//
// +kubebuilder:object:root=true
type FederatedLearningList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the federated learning jobs.
	Items []FederatedLearning `json:"items"`
}

// ClientSpec is the training client and where it runs.
type ClientSpec struct {
	// Image is the client's container image.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Image string `json:"image,omitempty"`

	// Placement chooses the clusters the client runs on, as a Placement's spec does; it is usually
	// a claim selector on the claim saying which clusters hold the training data.
	// +optional
	Placement clusterv1beta1.PlacementSpec `json:"placement,omitempty"`

	// SuperNode is the endpoint of the Flower SuperNode ClientAppIO API already running on each
	// cluster, as <service>.<namespace>:<port> (default flower-supernode.flower-addon:9094).
	// +optional
	// +kubebuilder:default="flower-supernode.flower-addon:9094"
	// +kubebuilder:validation:MaxLength=261
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?:[0-9]{1,5}$`
	SuperNode string `json:"supernode,omitempty"`
}
