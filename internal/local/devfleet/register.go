package devfleet

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// Components of the fleet that are Flotilla itself.
const (
	HubComponent   = "flotilla-hub"
	AgentComponent = "flotilla-agent"
)

// startFlotilla runs `flotilla hub` next to the hub and `flotilla agent` next to each spoke,
// accepts every spoke and waits until each is joined and available.
func startFlotilla(ctx context.Context, f *localk8s.Fleet, flotilla string, st *State, clk clock.PassiveClock, withKueue bool, say func(string, ...any)) error {
	cs, err := kubernetes.NewForConfig(f.Hub.Config)
	if err != nil {
		return err
	}
	if err := registration.EnsureBootstrapIdentity(ctx, cs); err != nil {
		return err
	}
	data, err := registration.BootstrapKubeconfig(ctx, cs, f.Hub.Config, 24*time.Hour)
	if err != nil {
		return err
	}
	bootstrap := filepath.Join(f.Hub.Dir, "bootstrap.kubeconfig")
	if err := os.WriteFile(bootstrap, data, 0o600); err != nil {
		return err
	}
	ports, err := localk8s.FreePorts(3)
	if err != nil {
		return err
	}
	start := func(cluster *localk8s.Cluster, component string, args []string) error {
		p, err := localk8s.StartProcess(cluster.Name+"/"+component, flotilla, args,
			filepath.Join(cluster.Dir, "logs", component+".log"), true)
		if err != nil {
			return err
		}
		st.Processes = append(st.Processes, ProcessState{Cluster: cluster.Name, Component: component, PID: p.PID(), Binary: flotilla, Log: p.LogPath})
		return nil
	}
	hubArgs := []string{"hub",
		"--kubeconfig", f.Hub.Kubeconfig, "--leader-elect=false",
		"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(ports[0]),
		"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(ports[1]),
		"--explain-bind-address", "127.0.0.1:" + strconv.Itoa(ports[2]),
		// A local fleet's scorers, and any SuperLink a FederatedLearning names, listen on this
		// machine's loopback.
		"--dynamic-scoring-allow-local-addresses",
		"--flower-superlink-allow-local-addresses",
		// and so does every spoke's API server, which ClusterProfiles' access providers name.
		"--cluster-profile-allow-local-addresses",
	}
	if withKueue {
		// Kueue on the hub hands the choice of MultiKueue workers to the hub (startKueue).
		hubArgs = append(hubArgs, "--kueue-dispatcher")
	}
	if err := start(f.Hub, HubComponent, hubArgs); err != nil {
		return err
	}
	for _, s := range f.Spokes {
		if err := createClaims(ctx, s, st); err != nil {
			return err
		}
		if err := start(s, AgentComponent, []string{"agent",
			"--cluster-name", s.Name, "--agent-id", "dev",
			"--bootstrap-kubeconfig", bootstrap, "--kubeconfig", s.Kubeconfig,
			"--dynamic-scoring-allow-local-addresses",
			// Where the hub and its consumers (ClusterProfiles' access providers) reach the spoke.
			"--spoke-external-server-urls", s.Config.Host,
		}); err != nil {
			return err
		}
	}
	say("  hub and %d agents started", len(f.Spokes))

	c, err := client.New(f.Hub.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	for _, s := range f.Spokes {
		var last string
		accepted := false
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
			if !accepted {
				res, err := registration.Accept(ctx, c, cs, s.Name, registration.AcceptOptions{Clock: clk})
				if err != nil {
					last = err.Error()
					return false, nil
				}
				if len(res.Approved()) == 0 && !res.PreviouslyApproved() {
					last = "no certificate request from the agent yet"
					return false, nil
				}
				accepted = true // approved and accepted: from now on only wait for the agent
			}
			mc := &clusterv1.ManagedCluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: s.Name}, mc); err != nil {
				last = err.Error()
				return false, nil
			}
			joined := meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined)
			available := meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
			missing := missingClaims(mc, st, s.Name)
			last = fmt.Sprintf("joined=%t available=%t", joined, available)
			if len(missing) > 0 {
				last += fmt.Sprintf(", the fleet file's claims %v not reported yet", missing)
			}
			return joined && available && len(missing) == 0, nil
		})
		if err != nil {
			return fmt.Errorf("cluster %s did not join the hub within 90s (%s); see %s", s.Name, last,
				filepath.Join(s.Dir, "logs", AgentComponent+".log"))
		}
		if err := labelCluster(ctx, c, s.Name, st); err != nil {
			return err
		}
		say("  %-12s registered: accepted, joined, available", s.Name)
	}
	return nil
}

// missingClaims lists the fleet file's claims of cluster that its agent has not reported to the
// hub yet: the agent reports claims on its own schedule, after it has joined.
func missingClaims(mc *clusterv1.ManagedCluster, st *State, cluster string) []string {
	cs, err := st.Cluster(cluster)
	if err != nil {
		return nil
	}
	reported := map[string]string{}
	for _, c := range mc.Status.ClusterClaims {
		reported[c.Name] = c.Value
	}
	var missing []string
	for name, value := range cs.Claims {
		if v, ok := reported[name]; !ok || v != value {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	return missing
}

// createClaims puts the fleet file's claims on the spoke as ClusterClaims, which the agent
// reports to the hub.
func createClaims(ctx context.Context, spoke *localk8s.Cluster, st *State) error {
	cs, err := st.Cluster(spoke.Name)
	if err != nil || len(cs.Claims) == 0 {
		return err
	}
	c, err := client.New(spoke.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	for name, value := range cs.Claims {
		claim := &clusterv1alpha1.ClusterClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       clusterv1alpha1.ClusterClaimSpec{Value: value},
		}
		if err := c.Create(ctx, claim); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("cluster %s: creating ClusterClaim %s: %w", spoke.Name, name, err)
		}
	}
	return nil
}

// labelCluster adds the fleet file's labels to the cluster's ManagedCluster on the hub.
func labelCluster(ctx context.Context, c client.Client, cluster string, st *State) error {
	cs, err := st.Cluster(cluster)
	if err != nil || len(cs.Labels) == 0 {
		return err
	}
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
		return err
	}
	patch := client.MergeFrom(mc.DeepCopy())
	if mc.Labels == nil {
		mc.Labels = map[string]string{}
	}
	maps.Copy(mc.Labels, cs.Labels)
	if err := c.Patch(ctx, mc, patch); err != nil {
		return fmt.Errorf("labeling ManagedCluster %s: %w", cluster, err)
	}
	return nil
}
