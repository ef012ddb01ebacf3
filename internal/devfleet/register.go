package devfleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/localk8s"
)

// Components of the fleet that are Flotilla itself.
const (
	HubComponent   = "flotilla-hub"
	AgentComponent = "flotilla-agent"
)

// startFlotilla runs `flotilla hub` next to the hub and `flotilla agent` next to each spoke,
// accepts every spoke and waits until each is joined and available.
func startFlotilla(ctx context.Context, f *localk8s.Fleet, flotilla string, st *State, clk clock.PassiveClock, say func(string, ...any)) error {
	hubDir := f.Hub.Dir
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
	bootstrap := filepath.Join(hubDir, "bootstrap.kubeconfig")
	if err := os.WriteFile(bootstrap, data, 0o600); err != nil {
		return err
	}
	ports, err := localk8s.FreePorts(2)
	if err != nil {
		return err
	}
	start := func(cluster, component string, args []string) error {
		p, err := localk8s.StartProcess(cluster+"/"+component, flotilla, args,
			filepath.Join(hubDirOf(f, cluster), "logs", component+".log"), true)
		if err != nil {
			return err
		}
		st.Processes = append(st.Processes, ProcessState{Cluster: cluster, Component: component, PID: p.PID(), Binary: flotilla, Log: p.LogPath})
		return nil
	}
	if err := start(localk8s.HubName, HubComponent, []string{"hub",
		"--kubeconfig", f.Hub.Kubeconfig, "--leader-elect=false",
		"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(ports[0]),
		"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(ports[1]),
	}); err != nil {
		return err
	}
	for _, s := range f.Spokes {
		if err := start(s.Name, AgentComponent, []string{"agent",
			"--cluster-name", s.Name, "--agent-id", "dev",
			"--bootstrap-kubeconfig", bootstrap, "--kubeconfig", s.Kubeconfig,
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
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
			res, err := registration.Accept(ctx, c, cs, s.Name, clk)
			if err != nil {
				last = err.Error()
				return false, nil
			}
			if len(res.Approved) == 0 && !res.PreviouslyApproved {
				last = "no certificate request from the agent yet"
				return false, nil
			}
			mc := &clusterv1.ManagedCluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: s.Name}, mc); err != nil {
				last = err.Error()
				return false, nil
			}
			joined := meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined)
			available := meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
			last = fmt.Sprintf("joined=%t available=%t", joined, available)
			return joined && available, nil
		})
		if err != nil {
			return fmt.Errorf("cluster %s did not join the hub within 90s (%s); see %s", s.Name, last,
				filepath.Join(s.Dir, "logs", AgentComponent+".log"))
		}
		say("  %-12s registered: accepted, joined, available", s.Name)
	}
	return nil
}

func hubDirOf(f *localk8s.Fleet, cluster string) string {
	c, _ := f.Cluster(cluster)
	return c.Dir
}
