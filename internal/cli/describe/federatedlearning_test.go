package describe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
)

// mnist is a Flower training in round 14 of 20 on two clusters: edge-1 was lost after round 9
// and edge-2 may not get a client. Its conditions are in another order than the printer's, and
// its timeline and rounds are longer than describe prints.
func mnist() *flv1alpha1.FederatedLearning {
	w := makeFL("research", "mnist", flv1alpha1.FrameworkFlower, 3*time.Hour).Rounds(20).MinClients(2).
		ClusterSets("gpu-fleet", "edge").Clusters(3).
		Claim("gpu.example/model", metav1.LabelSelectorOpIn, "A100").
		Claim("example.com/old-data", metav1.LabelSelectorOpExists).
		Claim("federated-learning-sample.client-data", metav1.LabelSelectorOpExists).
		Flower("superlink.flower-system:9091", "flower-supernode.flower-addon:9094").
		Phase(flv1alpha1.PhaseRunning, "round 14 of 20 aggregated").
		Condition(cond("Failed", metav1.ConditionFalse, "NotFailed", "", 3*time.Hour)).
		Condition(cond("Training", metav1.ConditionTrue, "Training", "round 14 of 20", 2*time.Hour)).
		Condition(cond("ServerReady", metav1.ConditionTrue, "ServerRunning", "ServerApp mnist-serverapp is available", 2*time.Hour)).
		Condition(cond("ClientsReady", metav1.ConditionTrue, "QuorumMet", "2 clients running (gpu-east, gpu-west), at least 2 needed", time.Hour)).
		Condition(cond("Succeeded", metav1.ConditionFalse, "NotFinished", "training has not finished", 3*time.Hour)).
		Client("edge-1", flv1alpha1.ClientLost, "NotDecided", "the placement no longer chooses this cluster (lost, unavailable or no longer matching); its client is removed", now.Add(-27*time.Minute)).
		Client("edge-2", flv1alpha1.ClientExcluded, "MissingClaim", "cluster edge-2 does not report the claim federated-learning-sample.client-data", now.Add(-2*time.Hour)).
		Client("gpu-east", flv1alpha1.ClientRunning, "Applied", "client applied on the cluster", now.Add(-2*time.Hour)).
		Client("gpu-west", flv1alpha1.ClientRunning, "Applied", "client applied on the cluster", now.Add(-2*time.Hour)).
		Progress(14, 20, "val_loss", "0.3", "loss", "0.2812", "accuracy", "0.9123").ProgressRead(now.Add(-30 * time.Second))
	for r := int32(1); r <= 14; r++ {
		if r <= 9 {
			w.RoundClients(r, "edge-1", "gpu-east", "gpu-west")
		} else {
			w.RoundClients(r, "gpu-east", "gpu-west")
		}
	}
	w.Event(now.Add(-3*time.Hour), "PlacementDecided", "", "3 clusters decided: edge-1, gpu-east, gpu-west").
		Event(now.Add(-2*time.Hour), "ClientDelivered", "edge-1", "").
		Event(now.Add(-2*time.Hour), "ClientDelivered", "gpu-east", "").
		Event(now.Add(-2*time.Hour), "ClientDelivered", "gpu-west", "").
		Event(now.Add(-2*time.Hour), "Running", "", "3 clients running")
	for r := 1; r <= 14; r++ {
		if r == 10 {
			w.Event(now.Add(-27*time.Minute), "ClientLost", "edge-1", "the cluster is no longer available").
				Event(now.Add(-27*time.Minute), "QuorumKept", "", "2 clients running, at least 2 needed")
		}
		w.Event(now.Add(-time.Duration(15-r)*5*time.Minute), "RoundAggregated", "", fmt.Sprintf("round %d aggregated", r))
	}
	return w.Obj()
}

// fraud is an OpenFL training that finished, with a long message on two lines.
func fraud() *flv1alpha1.FederatedLearning {
	return makeFL("research", "fraud", flv1alpha1.FrameworkOpenFL, 2*day).Rounds(3).MinClients(2).
		Listener(flv1alpha1.ListenerSpec{Name: "server", Type: flv1alpha1.ListenerTypeNodePort, Port: 31000, IP: "192.0.2.10"}).
		Storage(flv1alpha1.ModelStorageSpec{Type: flv1alpha1.StorageTypePersistentVolumeClaim, Name: "fraud-model", Size: "2Gi", Path: "/models"}).
		Phase(flv1alpha1.PhaseCompleted, "training finished after 3 rounds; the model is stored in PersistentVolumeClaim fraud-model at /models, "+
			"where the aggregator wrote its last checkpoint\nnext: copy it out with kubectl cp").
		Condition(cond("Succeeded", metav1.ConditionTrue, "ModelTrained", "training finished after 3 rounds", day)).
		Client("bank-a", flv1alpha1.ClientRunning, "Applied", "client applied on the cluster", now.Add(-2*day)).
		Client("bank-b", flv1alpha1.ClientRunning, "Applied", "client applied on the cluster", now.Add(-2*day)).
		Progress(3, 0).ProgressRead(now.Add(-day)).
		ListenerStatus(flv1alpha1.ListenerStatus{Name: "server", Type: flv1alpha1.ListenerTypeNodePort, Address: "192.0.2.10", Port: 31000}).
		Event(now.Add(-2*day), "Running", "", "2 clients running").
		Event(now.Add(-day), "Completed", "", "training finished after 3 rounds").Obj()
}

// waiting is a Flower training whose placement has decided no cluster, in the namespace of the
// fake hub's kubeconfig context.
func waiting() *flv1alpha1.FederatedLearning {
	return makeFL("default", "waiting", flv1alpha1.FrameworkFlower, 5*time.Minute).Rounds(5).MinClients(1).
		Phase(flv1alpha1.PhaseWaiting, "").
		Condition(cond("ClientsReady", metav1.ConditionFalse, "NotEnoughClusters", "no cluster is decided, 1 needed", 5*time.Minute)).Obj()
}

// fresh was just created; the hub has not written its status.
func fresh() *flv1alpha1.FederatedLearning {
	return makeFL("team-b", "fresh", "", 3*time.Second).Obj()
}

func TestDescribeFederatedLearning(t *testing.T) {
	cases := map[string]struct {
		args []string
		want string
	}{
		"a Flower training in progress": {
			args: []string{"fl", "mnist", "-n", "research"},
			want: lines(
				"Name:           mnist",
				"Namespace:      research",
				"Age:            3h",
				"Framework:      flower",
				"Server:",
				"  Image:        registry.example/mnist/server:1",
				"  Rounds:       20",
				"  Min clients:  2 (minAvailableClients)",
				"  SuperLink:    superlink.flower-system:9091",
				"Client:",
				"  Image:        registry.example/mnist/client:1",
				"  Cluster sets: gpu-fleet, edge",
				"  Clusters:     3 (numberOfClusters)",
				"  Data claim:   federated-learning-sample.client-data (each client's data path is its cluster's value of it)",
				"  SuperNode:    flower-supernode.flower-addon:9094",
				"Phase:          Running",
				"Message:        round 14 of 20 aggregated",
				"Conditions:",
				"  TYPE           STATUS   REASON          MESSAGE                                                     AGE",
				"  ServerReady    True     ServerRunning   ServerApp mnist-serverapp is available                      120m",
				"  ClientsReady   True     QuorumMet       2 clients running (gpu-east, gpu-west), at least 2 needed   60m",
				"  Training       True     Training        round 14 of 20                                              120m",
				"  Succeeded      False    NotFinished     training has not finished                                   3h",
				"  Failed         False    NotFailed       -                                                           3h",
				"Clients:        2 running of 3 decided, 1 lost",
				"  CLUSTER    STATE      REASON         SINCE   MESSAGE",
				"  edge-1     Lost       NotDecided     27m     the placement no longer chooses this cluster (lost, unavailable or no longer matching); its clien...",
				"  edge-2     Excluded   MissingClaim   120m    cluster edge-2 does not report the claim federated-learning-sample.client-data",
				"  gpu-east   Running    Applied        120m    client applied on the cluster",
				"  gpu-west   Running    Applied        120m    client applied on the cluster",
				"Progress:       round 14 of 20, read from the server 30s ago",
				"  Metrics:",
				"    accuracy = 0.9123",
				"    loss = 0.2812",
				"    val_loss = 0.3",
				"  Rounds:       the last 10 of 14 reported",
				"    ROUND   CLUSTERS",
				"    5       edge-1, gpu-east, gpu-west",
				"    6       edge-1, gpu-east, gpu-west",
				"    7       edge-1, gpu-east, gpu-west",
				"    8       edge-1, gpu-east, gpu-west",
				"    9       edge-1, gpu-east, gpu-west",
				"    10      gpu-east, gpu-west",
				"    11      gpu-east, gpu-west",
				"    12      gpu-east, gpu-west",
				"    13      gpu-east, gpu-west",
				"    14      gpu-east, gpu-west",
				"Listeners:      none",
				"Timeline:       the last 20 of 21 entries",
				"  AGE    EVENT             CLUSTER    MESSAGE",
				"  120m   ClientDelivered   edge-1     -",
				"  120m   ClientDelivered   gpu-east   -",
				"  120m   ClientDelivered   gpu-west   -",
				"  120m   Running           -          3 clients running",
				"  70m    RoundAggregated   -          round 1 aggregated",
				"  65m    RoundAggregated   -          round 2 aggregated",
				"  60m    RoundAggregated   -          round 3 aggregated",
				"  55m    RoundAggregated   -          round 4 aggregated",
				"  50m    RoundAggregated   -          round 5 aggregated",
				"  45m    RoundAggregated   -          round 6 aggregated",
				"  40m    RoundAggregated   -          round 7 aggregated",
				"  35m    RoundAggregated   -          round 8 aggregated",
				"  30m    RoundAggregated   -          round 9 aggregated",
				"  27m    ClientLost        edge-1     the cluster is no longer available",
				"  27m    QuorumKept        -          2 clients running, at least 2 needed",
				"  25m    RoundAggregated   -          round 10 aggregated",
				"  20m    RoundAggregated   -          round 11 aggregated",
				"  15m    RoundAggregated   -          round 12 aggregated",
				"  10m    RoundAggregated   -          round 13 aggregated",
				"  5m     RoundAggregated   -          round 14 aggregated",
				"Messages longer than 100 characters are cut (...); `kubectl get federatedlearning mnist -n research -o yaml` prints them whole.",
			),
		},
		"an OpenFL training that finished": {
			args: []string{"federatedlearning", "fraud", "-n", "research"},
			want: lines(
				"Name:           fraud",
				"Namespace:      research",
				"Age:            2d",
				"Framework:      openfl",
				"Server:",
				"  Image:        registry.example/fraud/server:1",
				"  Rounds:       3",
				"  Min clients:  2 (minAvailableClients)",
				"  Listeners:    server NodePort 31000 (ip 192.0.2.10)",
				"  Storage:      PersistentVolumeClaim fraud-model (2Gi) at /models",
				"Client:",
				"  Image:        registry.example/fraud/client:1",
				"  Cluster sets: every set bound to the namespace",
				"  Data claim:   none (no claim selector with operator Exists): clients get no data path",
				"Phase:          Completed",
				"Message:        training finished after 3 rounds; the model is stored in PersistentVolumeClaim fraud-model at",
				"                /models, where the aggregator wrote its last checkpoint",
				"                next: copy it out with kubectl cp",
				"Conditions:",
				"  TYPE        STATUS   REASON         MESSAGE                            AGE",
				"  Succeeded   True     ModelTrained   training finished after 3 rounds   24h",
				"Clients:        2 running of 2 decided",
				"  CLUSTER   STATE     REASON    SINCE   MESSAGE",
				"  bank-a    Running   Applied   2d      client applied on the cluster",
				"  bank-b    Running   Applied   2d      client applied on the cluster",
				"Progress:       round 3 of 3, read from the server 24h ago",
				"  Metrics:      none reported",
				"  Rounds:       no round reported its clusters",
				"Listeners:",
				"  NAME     TYPE       ADDRESS      PORT",
				"  server   NodePort   192.0.2.10   31000",
				"Timeline:",
				"  AGE   EVENT       CLUSTER   MESSAGE",
				"  2d    Running     -         2 clients running",
				"  24h   Completed   -         training finished after 3 rounds",
			),
		},
		"a training waiting for clusters": {
			args: []string{"fls", "waiting"},
			want: lines(
				"Name:           waiting",
				"Namespace:      default",
				"Age:            5m",
				"Framework:      flower",
				"Server:",
				"  Image:        registry.example/waiting/server:1",
				"  Rounds:       5",
				"  Min clients:  1 (minAvailableClients)",
				"  SuperLink:    -",
				"Client:",
				"  Image:        registry.example/waiting/client:1",
				"  Cluster sets: every set bound to the namespace",
				"  Data claim:   none (no claim selector with operator Exists): clients get no data path",
				"  SuperNode:    -",
				"Phase:          Waiting",
				"Conditions:",
				"  TYPE           STATUS   REASON              MESSAGE                           AGE",
				"  ClientsReady   False    NotEnoughClusters   no cluster is decided, 1 needed   5m",
				"Clients:        none: the placement has decided no cluster yet",
				"Progress:       none: the server has not reported an aggregated round yet",
				"Listeners:      none",
				"Timeline:       none",
			),
		},
		"no status yet": {
			args: []string{"fl", "fresh", "-n", "team-b"},
			want: lines(
				"Name:           fresh",
				"Namespace:      team-b",
				"Age:            3s",
				"Framework:      -",
				"Server:",
				"  Image:        registry.example/fresh/server:1",
				"  Rounds:       -",
				"  Min clients:  - (minAvailableClients)",
				"  Listeners:    none",
				"  Storage:      none",
				"Client:",
				"  Image:        registry.example/fresh/client:1",
				"  Cluster sets: every set bound to the namespace",
				"  Data claim:   none (no claim selector with operator Exists): clients get no data path",
				"Phase:          no status yet: the hub's FederatedLearning controller has not reconciled it",
				"Conditions:     no status yet",
				"Clients:        no status yet",
				"Progress:       no status yet",
				"Listeners:      no status yet",
				"Timeline:       no status yet",
			),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			newClient, _ := fakeHub(interceptor.Funcs{}, mnist(), fraud(), waiting(), fresh())
			out, errOut, err := runDescribe(newClient, tc.args...)
			if err != nil {
				t.Fatalf("describe %v: %v", tc.args, err)
			}
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if errOut != "" {
				t.Errorf("stderr: %q, want nothing", errOut)
			}
		})
	}
}

// TestWriteFederatedLearning prints objects directly, for what the command's cases leave out.
func TestWriteFederatedLearning(t *testing.T) {
	many := make([]string, 30)
	for i := range many {
		many[i] = fmt.Sprintf("site-%02d", i)
	}
	deleting := metav1.NewTime(now.Add(-time.Minute))
	cases := map[string]struct {
		fl   *flv1alpha1.FederatedLearning
		want string
	}{
		"a round of many clusters, rounds from the spec, being deleted": {
			fl: func() *flv1alpha1.FederatedLearning {
				w := makeFL("ns", "wide", flv1alpha1.FrameworkOther, time.Hour).Rounds(8).MinClients(30).
					Storage(flv1alpha1.ModelStorageSpec{Type: flv1alpha1.StorageTypeHostPath, Path: "/srv/models"}).
					Phase(flv1alpha1.PhaseRunning, "").Progress(2, 0, "loss", "0.5").RoundClients(2, many...).RoundClients(1)
				w.DeletionTimestamp = &deleting
				return w.Obj()
			}(),
			want: lines(
				"Name:           wide",
				"Namespace:      ns",
				"Age:            60m",
				"Deleting:       for 60s",
				"Framework:      other",
				"Server:",
				"  Image:        registry.example/wide/server:1",
				"  Rounds:       8",
				"  Min clients:  30 (minAvailableClients)",
				"  Listeners:    none",
				"  Storage:      HostPath /srv/models",
				"Client:",
				"  Image:        registry.example/wide/client:1",
				"  Cluster sets: every set bound to the namespace",
				"  Data claim:   none (no claim selector with operator Exists): clients get no data path",
				"Phase:          Running",
				"Conditions:     none yet",
				"Clients:        none: the placement has decided no cluster yet",
				"Progress:       round 2 of 8",
				"  Metrics:",
				"    loss = 0.5",
				"  Rounds:",
				"    ROUND   CLUSTERS",
				"    1       -",
				"    2       site-00, site-01, site-02, site-03, site-04, site-05, site-06, site-07, site-08, site-09, site-10...",
				"Listeners:      none",
				"Timeline:       none",
				"Messages longer than 100 characters are cut (...); `kubectl get federatedlearning wide -n ns -o yaml` prints them whole.",
			),
		},
		"a message of one long word": {
			fl: makeFL("ns", "word", flv1alpha1.FrameworkOpenFL, time.Minute).
				Phase(flv1alpha1.PhaseFailed, "failed: "+strings.Repeat("x", 120)+" end").Obj(),
			want: lines(
				"Name:           word",
				"Namespace:      ns",
				"Age:            60s",
				"Framework:      openfl",
				"Server:",
				"  Image:        registry.example/word/server:1",
				"  Rounds:       -",
				"  Min clients:  - (minAvailableClients)",
				"  Listeners:    none",
				"  Storage:      none",
				"Client:",
				"  Image:        registry.example/word/client:1",
				"  Cluster sets: every set bound to the namespace",
				"  Data claim:   none (no claim selector with operator Exists): clients get no data path",
				"Phase:          Failed",
				"Message:        failed:",
				"                "+strings.Repeat("x", 120),
				"                end",
				"Conditions:     none yet",
				"Clients:        none: the placement has decided no cluster yet",
				"Progress:       none: the server has not reported an aggregated round yet",
				"Listeners:      none",
				"Timeline:       none",
			),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := writeFederatedLearning(&out, tc.fl, clocktesting.NewFakePassiveClock(now)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFederatedLearningSpecCells(t *testing.T) {
	cases := map[string]struct {
		got, want string
	}{
		"the last Exists claim": {
			got:  (&makeFL("ns", "a", "", 0).Claim("a", metav1.LabelSelectorOpExists).Claim("b", metav1.LabelSelectorOpExists).Claim("c", metav1.LabelSelectorOpDoesNotExist).Obj().Spec).DataClaim(),
			want: "b",
		},
		"no Exists claim": {
			got:  (&makeFL("ns", "a", "", 0).Claim("a", metav1.LabelSelectorOpIn, "x").Obj().Spec).DataClaim(),
			want: "",
		},
		"S3 storage": {
			got:  storage(flv1alpha1.ModelStorageSpec{Type: flv1alpha1.StorageTypeS3Bucket, S3: &flv1alpha1.S3StorageSpec{BucketName: "models", Prefix: "/resnet/", Region: "us-east-1"}}),
			want: "S3Bucket models/resnet/ (us-east-1)",
		},
		"S3 storage without s3": {
			got:  storage(flv1alpha1.ModelStorageSpec{Type: flv1alpha1.StorageTypeS3Bucket}),
			want: "S3Bucket (no s3 set)",
		},
		"a claim without its name": {
			got:  storage(flv1alpha1.ModelStorageSpec{Type: flv1alpha1.StorageTypePersistentVolumeClaim}),
			want: "PersistentVolumeClaim -",
		},
		"listeners, one without a name or port": {
			got: specListeners([]flv1alpha1.ListenerSpec{
				{Name: "grpc", Type: flv1alpha1.ListenerTypeLoadBalancer, Port: 8080},
				{Type: flv1alpha1.ListenerTypeNodePort},
			}),
			want: "grpc LoadBalancer 8080, NodePort -",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribeFederatedLearningRejectsBadInput(t *testing.T) {
	noMatch := &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: flv1alpha1.GroupVersion.Group, Kind: "FederatedLearning"}, SearchedVersions: []string{"v1alpha1"}}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: flv1alpha1.GroupVersion.Group, Resource: "federatedlearnings"}, "mnist",
		errors.New(`User "alice" cannot get resource "federatedlearnings"`))
	cases := map[string]struct {
		args      []string
		getErr    error
		wantErr   string
		wantNoHub bool
	}{
		"no argument": {
			args:      []string{"fl"},
			wantErr:   "flotilla describe federatedlearning takes one FederatedLearning NAME, got 0 arguments: for example `flotilla describe fl mnist -n research`",
			wantNoHub: true,
		},
		"two arguments": {
			args:      []string{"fl", "mnist", "fraud"},
			wantErr:   "takes one FederatedLearning NAME, got 2 arguments",
			wantNoHub: true,
		},
		"NAMESPACE/NAME": {
			args:      []string{"fl", "research/mnist"},
			wantErr:   `FederatedLearning "research/mnist": give its name and its namespace with -n (for example ` + "`flotilla describe fl mnist -n research`)",
			wantNoHub: true,
		},
		"unknown name": {
			args:    []string{"fl", "nope", "-n", "research", "--kubeconfig", "hub.kubeconfig"},
			wantErr: "no FederatedLearning nope in namespace research on the hub of kubeconfig hub.kubeconfig: list them with `flotilla get fl -n research --kubeconfig hub.kubeconfig` (or in every namespace with -A)",
		},
		"in another namespace than the context's": {
			args:    []string{"fl", "mnist", "--kubeconfig", "hub.kubeconfig"},
			wantErr: "no FederatedLearning mnist in namespace default on the hub of kubeconfig hub.kubeconfig: list them with `flotilla get fl -n default --kubeconfig hub.kubeconfig`",
		},
		"CRDs not installed": {
			args:    []string{"fl", "mnist", "-n", "research", "--kubeconfig", "hub.kubeconfig"},
			getErr:  noMatch,
			wantErr: "the hub of kubeconfig hub.kubeconfig does not serve FederatedLearnings: no matches for kind \"FederatedLearning\" in version \"federation-ai.open-cluster-management.io/v1alpha1\"; install the CRDs with `flotilla install crds --kubeconfig hub.kubeconfig`",
		},
		"not allowed": {
			args:    []string{"fl", "mnist", "-n", "research", "--kubeconfig", "hub.kubeconfig"},
			getErr:  forbidden,
			wantErr: "; use a kubeconfig whose user may get federatedlearnings in namespace research",
		},
		"hub unreachable": {
			args:    []string{"fl", "mnist", "-n", "research", "--kubeconfig", "hub.kubeconfig"},
			getErr:  errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"),
			wantErr: "reading FederatedLearning research/mnist on the hub of kubeconfig hub.kubeconfig: dial tcp 127.0.0.1:6443: connect: connection refused; check that the hub's API server at https://127.0.0.1:6443 is up and reachable",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			funcs := interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if tc.getErr != nil {
					return tc.getErr
				}
				return c.Get(ctx, key, obj, opts...)
			}}
			newClient, asked := fakeHub(funcs, mnist())
			out, errOut, err := runDescribe(newClient, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("describe %v: err = %v, want one saying %q", tc.args, err, tc.wantErr)
			}
			if tc.wantNoHub && *asked != nil {
				t.Errorf("bad input reached the hub (flags %+v)", **asked)
			}
			if out != "" || errOut != "" {
				t.Errorf("a failed describe printed stdout %q stderr %q", out, errOut)
			}
		})
	}
}
