package describe

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/printing"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/contract/fencing"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
)

func newClusterCommand(io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc) *cobra.Command {
	var kube kubeflags.Flags
	cmd := &cobra.Command{
		Use:     "cluster NAME",
		Aliases: []string{"clusters", "managedcluster", "managedclusters", "mcl"},
		Short:   "Show a ManagedCluster: its conditions, taints, last heartbeat and its failover timeline",
		Long: "Reads a ManagedCluster and its Lease from the hub and prints its set, taints, conditions, the fencing\n" +
			"timing it runs under (docs/failover.md), and a timeline: last heartbeat, declared lost, tainted, the\n" +
			"fence's last report (fenced at, healed at, what was stopped, resumed and removed), available again.",
		Example: `  flotilla describe cluster gpu-east`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || args[0] == "" {
				return fmt.Errorf("flotilla describe cluster takes one cluster name, got %d arguments: for example gpu-east; `flotilla get clusters` lists them", len(args))
			}
			return runCluster(cmd.Context(), io, clk, newClient, kube, args[0])
		},
	}
	kube.AddFlags(cmd.Flags(), "the hub")
	return cmd
}

func runCluster(ctx context.Context, io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc, kube kubeflags.Flags, name string) error {
	c, hub, err := newClient(kube)
	if err != nil {
		return err
	}
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		return getError(err, hub, kube, "ManagedCluster", "managedclusters", "", name,
			fmt.Sprintf("no ManagedCluster %s on the hub of kubeconfig %s: list them with `%s`", name, hub.Source, command("flotilla get clusters", kube)))
	}
	lease := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: name, Name: clusterv1.ManagedClusterLeaseName}, lease); err != nil {
		lease = nil // not accepted yet, or not readable: the heartbeat line says so
	}
	return writeCluster(io.Out, mc, lease, fleetview.RequeuedWorkloads(ctx, c, mc), clk)
}

// writeCluster prints mc for a reader.
func writeCluster(w io.Writer, mc *clusterv1.ManagedCluster, lease *coordinationv1.Lease, requeued map[string]*kueuev1beta2.Workload, clk clock.PassiveClock) error {
	p := &printer{w: w}
	p.field("Name:", mc.Name)
	p.field("Accepted:", fmt.Sprint(mc.Spec.HubAcceptsClient))
	if set := mc.Labels[clusterv1beta2.ClusterSetLabel]; set != "" {
		p.field("Set:", set)
	}
	if lease == nil {
		p.field("Heartbeat:", "no Lease "+clusterv1.ManagedClusterLeaseName+" readable in namespace "+mc.Name)
	} else {
		renewed := lease.CreationTimestamp.Time
		if lease.Spec.RenewTime != nil {
			renewed = lease.Spec.RenewTime.Time
		}
		p.field("Heartbeat:", fmt.Sprintf("%s ago (lease renewed at %s)", printing.Age(metav1.NewTime(renewed), clk), renewed.UTC().Format(time.RFC3339)))
	}
	t, timed, terr := fencing.OfCluster(mc.Annotations)
	switch {
	case terr != nil:
		p.field("Failover:", "annotation unreadable: "+terr.Error())
	case timed:
		p.field("Failover:", fmt.Sprintf("fenced: lease %s, the agent stops fenced work after %s, the hub declares the cluster lost after %s; epoch %d",
			t.Lease, t.FenceAfter, t.LostAfter, fencing.Epoch(mc.Annotations)))
	default:
		p.field("Failover:", "not fenced (no FailoverPolicy for its sets and no fenced work): OCM's lease rule only")
	}
	if len(mc.Spec.Taints) > 0 {
		p.line("Taints:")
		for _, tn := range mc.Spec.Taints {
			added := "-"
			if tn.TimeAdded != nil {
				added = printing.Age(*tn.TimeAdded, clk) + " ago"
			}
			p.line("  %s=%s:%s (added %s)", tn.Key, tn.Value, tn.Effect, added)
		}
	}
	if len(mc.Status.Conditions) > 0 {
		p.line("Conditions:")
		p.conditions("  ", mc.Status.Conditions, clk)
	}
	p.line("Timeline:")
	tl := fleetview.ClusterTimeline(mc, lease, requeued)
	if len(tl.Events) == 0 {
		p.line("  nothing recorded")
	}
	for _, e := range tl.Events {
		p.line("  %s  %s", e.Time.Format(time.RFC3339), e.Text)
	}
	for _, n := range tl.Notes {
		p.line("  (%s)", n)
	}
	return p.err
}
