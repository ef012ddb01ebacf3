package describe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/printing"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/contract/compliancehistory"
)

func newPolicyCommand(io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc) *cobra.Command {
	var kube kubeflags.Flags
	var namespace, cluster string
	cmd := &cobra.Command{
		Use:     "policy NAME",
		Aliases: []string{"policies", "plc"},
		Short:   "Show a Policy: its templates, the bindings placing it, and each cluster's compliance with its latest message",
		Long: "Reads a root Policy from the hub and prints its remediation action, its templates (kind and name), the\n" +
			"bindings that place it (binding, placement, policy set), then one row per placed cluster: its compliance,\n" +
			"the latest message its governance-policy-framework reported for each template, and when. The messages\n" +
			"are read from the cluster's copy of the policy (<namespace>.<name> in the cluster's namespace).\n\n" +
			"Then the compliance history the hub keeps (ConfigMap <name>.compliance-history, every change of each\n" +
			"cluster's compliance, the last 10,000): the periods each cluster spent NonCompliant or Pending, newest\n" +
			"first, with how long; --cluster shows one cluster's every period.\n\n" +
			"The Policy is looked up in the namespace of -n, else of the kubeconfig's context. `flotilla get policies -A`\n" +
			"lists them.",
		Example: `  flotilla describe policy policy-namespace -n governance
  flotilla describe policy data-residency-eu -n governance --cluster gpu-west`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || strings.Contains(args[0], "/") {
				return fmt.Errorf("flotilla describe policy takes one Policy NAME and its namespace with -n: for example `flotilla describe policy policy-namespace -n governance`")
			}
			return runPolicy(cmd.Context(), io, clk, newClient, kube, namespace, args[0], cluster)
		},
	}
	kube.AddFlags(cmd.Flags(), "the hub")
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "namespace of the Policy (default: the kubeconfig context's namespace)")
	cmd.Flags().StringVar(&cluster, "cluster", "", "show this cluster only, with its whole compliance history")
	return cmd
}

func runPolicy(ctx context.Context, io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc, kube kubeflags.Flags, ns, name, cluster string) error {
	c, hub, err := newClient(kube)
	if err != nil {
		return err
	}
	if ns == "" {
		ns = hub.Namespace
	}
	var p policyv1.Policy
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
		return getError(err, hub, kube, "Policy", "policies", ns, name,
			fmt.Sprintf("no Policy %s in namespace %s on the hub of kubeconfig %s: list them with `%s` (or in every namespace with -A)",
				name, ns, hub.Source, command("flotilla get policies -n "+ns, kube)))
	}
	if cluster != "" {
		p.Status.Status = slices.DeleteFunc(p.Status.Status, func(s *policyv1.CompliancePerClusterStatus) bool { return s.ClusterName != cluster })
	}
	copies := map[string]*policyv1.Policy{}
	for _, s := range p.Status.Status {
		cp := &policyv1.Policy{}
		// A copy the user may not read shows no message: the root's status still says the state.
		if c.Get(ctx, client.ObjectKey{Namespace: s.ClusterNamespace, Name: policyv1.ReplicatedName(p.Namespace, p.Name)}, cp) == nil {
			copies[s.ClusterName] = cp
		}
	}
	var history []compliancehistory.Entry
	cm := &corev1.ConfigMap{}
	// A history the user may not read, or one the hub did not make, is not shown.
	if c.Get(ctx, client.ObjectKey{Namespace: ns, Name: compliancehistory.Name(name)}, cm) == nil && cm.Labels[compliancehistory.Label] == name {
		history, _ = compliancehistory.Parse(cm.Data[compliancehistory.Key])
	}
	if err := writePolicy(io.Out, &p, copies, clk); err != nil {
		return err
	}
	return writeHistory(io.Out, history, cluster, clk)
}

// shownPeriods is how many periods the history shows without --cluster.
const shownPeriods = 20

// writeHistory prints the periods of history (all of cluster's when given, else the latest
// shownPeriods not Compliant), newest first.
func writeHistory(w io.Writer, history []compliancehistory.Entry, cluster string, clk clock.PassiveClock) error {
	periods := compliancehistory.Periods(history)
	slices.Reverse(periods)
	periods = slices.DeleteFunc(periods, func(p compliancehistory.Period) bool {
		if cluster != "" {
			return p.Cluster != cluster
		}
		return p.State == policyv1.Compliant
	})
	pr := &printer{w: w}
	what := "Compliance history (periods not Compliant, newest first):"
	if cluster != "" {
		what = "Compliance history of " + cluster + " (newest first):"
	}
	if len(periods) == 0 {
		pr.line("Compliance history: none recorded")
		return pr.err
	}
	pr.line(what)
	more := 0
	if cluster == "" && len(periods) > shownPeriods {
		more = len(periods) - shownPeriods
		periods = periods[:shownPeriods]
	}
	t := printing.NewIndentedTable(w, "  ", "CLUSTER", "STATE", "FROM", "TO", "FOR")
	now := clk.Now()
	for _, p := range periods {
		to := "now"
		if !p.End.IsZero() {
			to = p.End.UTC().Format(time.RFC3339)
		}
		t.Row(p.Cluster, printing.OrDash(string(p.State)), p.Start.UTC().Format(time.RFC3339), to, p.Duration(now).Round(time.Second).String())
	}
	pr.flush(t)
	if more > 0 {
		pr.line("  ... %d earlier periods: --cluster CLUSTER shows one cluster's all", more)
	}
	return pr.err
}

// writePolicy prints p, with the latest messages of the clusters' copies.
func writePolicy(w io.Writer, p *policyv1.Policy, copies map[string]*policyv1.Policy, clk clock.PassiveClock) error {
	pr := &printer{w: w}
	pr.field("Name:", p.Name)
	pr.field("Namespace:", p.Namespace)
	pr.field("Age:", printing.Age(p.CreationTimestamp, clk))
	pr.field("Remediation:", printing.OrDash(strings.ToLower(string(p.Spec.RemediationAction)))+" (overrides the templates' when set)")
	state := printing.OrDash(string(p.Status.ComplianceState))
	if p.Spec.Disabled {
		state = "disabled: on no cluster"
	}
	compliant := 0
	for _, s := range p.Status.Status {
		if s.ComplianceState == policyv1.Compliant {
			compliant++
		}
	}
	pr.field("Compliance:", fmt.Sprintf("%s (%d of %d clusters comply)", state, compliant, len(p.Status.Status)))
	pr.line("Templates:")
	for i, t := range p.Spec.PolicyTemplates {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if t == nil || json.Unmarshal(t.ObjectDefinition.Raw, &head) != nil {
			pr.line("  %d: (not an object)", i)
			continue
		}
		pr.line("  %d: %s %s", i, printing.OrDash(head.Kind), printing.OrDash(head.Metadata.Name))
	}
	if len(p.Status.Placement) == 0 {
		pr.field("Placement:", "no PlacementBinding in the namespace places it")
	} else {
		pr.line("Placement:")
		t := printing.NewIndentedTable(w, "  ", "BINDING", "PLACEMENT", "POLICYSET")
		for _, pl := range p.Status.Placement {
			t.Row(pl.PlacementBinding, printing.OrDash(pl.Placement), printing.OrDash(pl.PolicySet))
		}
		pr.flush(t)
	}
	if len(p.Status.Status) == 0 {
		pr.field("Clusters:", "none")
		return pr.err
	}
	pr.line("Clusters:")
	t := printing.NewIndentedTable(w, "  ", "CLUSTER", "COMPLIANCE", "TEMPLATE", "LATEST MESSAGE", "SINCE")
	for _, s := range p.Status.Status {
		cp := copies[s.ClusterName]
		if cp == nil || len(cp.Status.Details) == 0 {
			t.Row(s.ClusterName, printing.OrDash(string(s.ComplianceState)), "-", "-", "-")
			continue
		}
		for _, d := range cp.Status.Details {
			msg, since := "-", "-"
			if d != nil && len(d.History) > 0 {
				msg, since = oneLine(d.History[0].Message), printing.Age(d.History[0].LastTimestamp, clk)
			}
			t.Row(s.ClusterName, printing.OrDash(string(s.ComplianceState)), printing.OrDash(d.TemplateMeta.Name), msg, since)
		}
	}
	pr.flush(t)
	return pr.err
}

// flush writes t, keeping the first error.
func (p *printer) flush(t *printing.Table) {
	if err := t.Flush(); err != nil && p.err == nil {
		p.err = err
	}
}
