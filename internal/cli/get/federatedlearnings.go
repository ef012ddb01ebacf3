package get

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"k8s.io/utils/clock"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/internal/cli/printing"
)

const (
	// maxMetricsWidth is about as wide as the METRICS cell grows before metrics are left out.
	maxMetricsWidth = 40
	// maxMessageWidth is as wide as the MESSAGE cell of -o wide grows.
	maxMessageWidth = 100
)

// printFederatedLearnings writes [NAMESPACE] NAME FRAMEWORK PHASE ROUND CLIENTS METRICS AGE, and
// MESSAGE after AGE when wide. ROUND is the last aggregated round of the rounds the server runs
// ("2/5"), "-" before the server reports one. CLIENTS is the clusters whose client runs of those
// the placement decides (every client not Lost), "-" before any is decided. METRICS are the last
// aggregated metrics, sorted by name, as many as fit in about maxMetricsWidth characters and then
// "+N more"; `flotilla describe fl` prints them all.
func printFederatedLearnings(w io.Writer, list *flv1alpha1.FederatedLearningList, clk clock.PassiveClock, allNamespaces, wide bool) error {
	header := []string{"NAME", "FRAMEWORK", "PHASE", "ROUND", "CLIENTS", "METRICS", "AGE"}
	if allNamespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	if wide {
		header = append(header, "MESSAGE")
	}
	t := printing.NewTable(w, header...)
	for i := range list.Items {
		fl := &list.Items[i]
		cells := []string{fl.Name,
			printing.OrDash(string(fl.Spec.Framework)),
			printing.OrDash(string(fl.Status.Phase)),
			round(fl),
			clients(fl.Status.Clients),
			metrics(fl.Status.Progress),
			printing.Age(fl.CreationTimestamp, clk)}
		if allNamespaces {
			cells = append([]string{fl.Namespace}, cells...)
		}
		if wide {
			cells = append(cells, printing.OrDash(truncate(strings.Join(strings.Fields(fl.Status.Message), " "), maxMessageWidth)))
		}
		t.Row(cells...)
	}
	return t.Flush()
}

// round is "ROUND/ROUNDS", the rounds from the spec when the server did not say; "-" before the
// server reports progress.
func round(fl *flv1alpha1.FederatedLearning) string {
	p := fl.Status.Progress
	if p == nil {
		return "-"
	}
	rounds := p.Rounds
	if rounds == 0 {
		rounds = fl.Spec.Server.Rounds
	}
	if rounds == 0 {
		return strconv.Itoa(int(p.Round))
	}
	return fmt.Sprintf("%d/%d", p.Round, rounds)
}

// clients is "RUNNING/DECIDED": decided clusters are every client that is not Lost (Pending,
// Running and Excluded ones).
func clients(cs []flv1alpha1.ClientStatus) string {
	if len(cs) == 0 {
		return "-"
	}
	running, decided := 0, 0
	for _, c := range cs {
		switch c.State {
		case flv1alpha1.ClientRunning:
			running++
			decided++
		case flv1alpha1.ClientLost:
		default:
			decided++
		}
	}
	return fmt.Sprintf("%d/%d", running, decided)
}

// metrics is "accuracy=0.91 loss=0.28": the metrics sorted by name, those that do not fit in
// maxMetricsWidth left out as "+N more" (a first metric too long on its own is cut).
func metrics(p *flv1alpha1.TrainingProgress) string {
	if p == nil || len(p.Metrics) == 0 {
		return "-"
	}
	names := make([]string, 0, len(p.Metrics))
	for n := range p.Metrics {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		m := n + "=" + strings.Join(strings.Fields(p.Metrics[n]), " ")
		if i == 0 {
			b.WriteString(truncate(m, maxMetricsWidth))
			continue
		}
		if len([]rune(b.String()))+1+len([]rune(m)) > maxMetricsWidth {
			fmt.Fprintf(&b, " +%d more", len(names)-i)
			break
		}
		b.WriteString(" " + m)
	}
	return b.String()
}

// truncate cuts s to n characters, the last three "..." when it cuts.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}
