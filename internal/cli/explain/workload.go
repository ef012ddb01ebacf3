package explain

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
)

func newWorkloadCommand(io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc) *cobra.Command {
	var kube kubeflags.Flags
	var output string
	cmd := &cobra.Command{
		Use:   "workload NAMESPACE/NAME",
		Short: "Say why a Kueue Workload on the hub waits, or where it runs",
		Long: "Reads a Kueue Workload on the hub and what decides its fate, and prints in one line why it waits or\n" +
			"where it runs, then: its LocalQueue, ClusterQueue, priority and conditions; its place among the\n" +
			"ClusterQueue's pending workloads (computed from the hub's Workloads as Kueue orders them: Kueue's\n" +
			"visibility API is not read); its admission checks; and the workers of its MultiKueueConfig in rank\n" +
			"order, each with whether it is active, the dispatcher's verdict on the workload's pods there (the\n" +
			"same function Flotilla's MultiKueue dispatcher decides with), whether it is offered the workload and\n" +
			"whether the workload runs there.\n\n" +
			"NAME alone is in the namespace of the kubeconfig's context. The Workload of a Job is named after it:\n" +
			"list them with `kubectl get workloads -n NAMESPACE`.",
		Example: `  flotilla explain workload ml/job-train-3f2a1
  flotilla explain workload ml/job-train-3f2a1 -o json --kubeconfig "$(flotilla dev kubeconfig hub)"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "table" && output != "json" {
				return fmt.Errorf("--output (-o) %q is not supported: use -o table or -o json", output)
			}
			return runWorkload(cmd.Context(), io, clk, newClient, kube, output, args[0])
		},
	}
	kube.AddFlags(cmd.Flags(), "the hub")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	return cmd
}

func runWorkload(ctx context.Context, io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc, kube kubeflags.Flags, output, arg string) error {
	c, hub, err := newClient(kube)
	if err != nil {
		return err
	}
	ns, name, err := namespacedName("workload", arg, hub.Namespace)
	if err != nil {
		return err
	}
	e, err := fleetview.ExplainWorkload(ctx, c, ns, name, clk.Now())
	if err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("workload %s/%s is not on the hub of kubeconfig %s: list them with `%s`",
				ns, name, hub.Source, strings.TrimSpace("kubectl get workloads.kueue.x-k8s.io -n "+ns+" "+kube.Args()))
		case meta.IsNoMatchError(err):
			return fmt.Errorf("the hub of kubeconfig %s does not serve Kueue's Workloads (%w): install Kueue on the hub (docs/kueue.md)", hub.Source, err)
		}
		return fmt.Errorf("%w, on the hub of kubeconfig %s", err, hub.Source)
	}
	if output == "json" {
		b, err := json.MarshalIndent(e, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(io.Out, "%s\n", b)
		return err
	}
	return WriteWorkloadTable(io.Out, e)
}

// WriteWorkloadTable writes the explanation for a reader: the summary, the queue, the conditions,
// the admission checks and the MultiKueue workers.
func WriteWorkloadTable(w io.Writer, e *fleetview.WorkloadExplanation) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Workload %s/%s: %s\n", e.Namespace, e.Name, e.Summary)
	cq := e.ClusterQueue
	if cq == "" {
		cq = "(none)"
	}
	fmt.Fprintf(&b, "Queue: LocalQueue %s/%s -> ClusterQueue %s, priority %d", e.Namespace, e.LocalQueue, cq, e.Priority)
	if e.PriorityClass != "" {
		fmt.Fprintf(&b, " (%s)", e.PriorityClass)
	}
	b.WriteString("\n")
	if q := e.Queue; q != nil {
		fmt.Fprintf(&b, "Position: %d of %d pending in ClusterQueue %s, %d ahead", q.Position, q.Pending, e.ClusterQueue, q.Ahead)
		if len(q.First) > 0 {
			names := make([]string, 0, len(q.First))
			for _, a := range q.First {
				names = append(names, fmt.Sprintf("%s/%s (priority %d)", a.Namespace, a.Name, a.Priority))
			}
			more := ""
			if q.Ahead > len(q.First) {
				more = fmt.Sprintf(", and %d more", q.Ahead-len(q.First))
			}
			fmt.Fprintf(&b, ": %s%s", strings.Join(names, ", "), more)
		}
		fmt.Fprintf(&b, "\n  (%s; counted in %s)\n", q.Computed, q.Scope)
		if q.RequeueAt != "" {
			fmt.Fprintf(&b, "  Kueue's backoff holds it until %s\n", q.RequeueAt)
		}
	}
	if fs := e.FairShare; fs != nil {
		parts := make([]string, 0, len(fs.ClusterQueues))
		for _, q := range fs.ClusterQueues {
			parts = append(parts, fmt.Sprintf("%s %d (weight %s, %d pending, %d admitted)", q.Name, q.WeightedShare, q.Weight, q.PendingWorkloads, q.AdmittedWorkloads))
		}
		fmt.Fprintf(&b, "Fair share: ClusterQueue %s is %d of %d in cohort %s, lowest weighted share first (Kueue serves that one first): %s\n",
			e.ClusterQueue, fs.Rank, len(fs.ClusterQueues), fs.Cohort, strings.Join(parts, ", "))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 6, 4, 3, ' ', 0)
	row := func(cells ...string) { _, _ = fmt.Fprintln(tw, strings.Join(cells, "\t")) }
	row("\nCONDITION", "STATUS", "REASON", "MESSAGE")
	for _, c := range e.Conditions {
		row(c.Type, c.Status, c.Reason, c.Message)
	}
	if len(e.AdmissionChecks) > 0 {
		row("\nADMISSION CHECK", "STATE", "MESSAGE")
		for _, ac := range e.AdmissionChecks {
			row(ac.Name, ac.State, ac.Message)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	mk := e.MultiKueue
	if mk == nil {
		_, err := fmt.Fprintln(w, "\nNo MultiKueue admission check: the workload runs on the hub's own nodes, if any.")
		return err
	}
	if mk.Config == "" {
		_, err := fmt.Fprintf(w, "\nMultiKueue: AdmissionCheck %s names no MultiKueueConfig on the hub.\n", mk.AdmissionCheck)
		return err
	}
	offer := strings.Join(mk.OfferOrder, ", ")
	if offer == "" {
		offer = "none"
	}
	offered := "offered in order: "
	if mk.State == "" {
		offered = "once it holds quota, offered in order: "
	}
	if _, err := fmt.Fprintf(w, "\nMultiKueue: AdmissionCheck %s, MultiKueueConfig %s (its order is the placement's ranking, best first); %s%s\n",
		mk.AdmissionCheck, mk.Config, offered, offer); err != nil {
		return err
	}
	row("RANK", "WORKER", "ACTIVE", "FIT", "NOMINATED", "RUNS HERE", "MESSAGE")
	for _, v := range mk.Workers {
		msg := v.Message
		if !v.Active {
			msg = "inactive (" + v.ActiveMessage + "), not offered; " + msg
		}
		row(fmt.Sprint(v.Rank), v.Cluster, yesNo(v.Active), string(v.Fit), yesNo(v.Nominated), yesNo(v.RunsHere), msg)
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
