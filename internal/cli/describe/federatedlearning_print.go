package describe

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/internal/cli/printing"
)

const (
	// lastRounds and lastEvents are how many rounds and timeline entries describe prints.
	lastRounds = 10
	lastEvents = 20
	// maxCell is the widest a message or cluster list grows in a table before it is cut.
	maxCell = 100
	// wrapAt is the width status.message is wrapped at, after its label.
	wrapAt = 100
	// noStatus is what each status section says before the controller first writes the status.
	noStatus = "no status yet"
)

// conditionOrder is the order a reader checks a FederatedLearning's conditions in.
var conditionOrder = []string{"ServerReady", "ClientsReady", "Training", "Succeeded", "Failed"}

// flPrinter is a printer that remembers whether it cut a table cell, to say so at the end.
type flPrinter struct {
	*printer
	cut bool
}

// writeFederatedLearning prints fl for a reader: the spec in brief, then each part of the status.
func writeFederatedLearning(w io.Writer, fl *flv1alpha1.FederatedLearning, clk clock.PassiveClock) error {
	p := &flPrinter{printer: &printer{w: w}}
	p.field("Name:", fl.Name)
	p.field("Namespace:", fl.Namespace)
	p.field("Age:", printing.Age(fl.CreationTimestamp, clk))
	if fl.DeletionTimestamp != nil {
		p.field("Deleting:", "for "+printing.Age(*fl.DeletionTimestamp, clk))
	}
	p.spec(&fl.Spec)

	st := &fl.Status
	if isEmptyStatus(st) {
		p.field("Phase:", noStatus+": the hub's FederatedLearning controller has not reconciled it")
		for _, section := range []string{"Conditions:", "Clients:", "Progress:", "Listeners:", "Timeline:"} {
			p.field(section, noStatus)
		}
		return p.err
	}
	p.field("Phase:", printing.OrDash(string(st.Phase)))
	if st.Message != "" {
		p.wrapped("Message:", st.Message)
	}
	p.flConditions(st.Conditions, clk)
	p.clients(st.Clients, clk)
	p.progress(st.Progress, fl.Spec.Server.Rounds, clk)
	p.listeners(st.Listeners)
	p.timeline(st.Timeline, clk)
	if p.cut {
		p.line("Messages longer than %d characters are cut (...); `kubectl get federatedlearning %s -n %s -o yaml` prints them whole.", maxCell, fl.Name, fl.Namespace)
	}
	return p.err
}

// spec writes the framework, the server's and the client's settings.
func (p *flPrinter) spec(s *flv1alpha1.FederatedLearningSpec) {
	p.field("Framework:", printing.OrDash(string(s.Framework)))
	p.line("Server:")
	p.subfield("Image:", printing.OrDash(s.Server.Image))
	p.subfield("Rounds:", count(s.Server.Rounds))
	p.subfield("Min clients:", count(s.Server.MinAvailableClients)+" (minAvailableClients)")
	flower := s.Framework == flv1alpha1.FrameworkFlower
	if flower {
		p.subfield("SuperLink:", printing.OrDash(s.Server.SuperLink))
	} else {
		p.subfield("Listeners:", specListeners(s.Server.Listeners))
		p.subfield("Storage:", storage(s.Server.Storage))
	}
	p.line("Client:")
	p.subfield("Image:", printing.OrDash(s.Client.Image))
	pl := &s.Client.Placement
	sets := "every set bound to the namespace"
	if len(pl.ClusterSets) > 0 {
		sets = strings.Join(pl.ClusterSets, ", ")
	}
	p.subfield("Cluster sets:", sets)
	if pl.NumberOfClusters != nil {
		p.subfield("Clusters:", strconv.Itoa(int(*pl.NumberOfClusters))+" (numberOfClusters)")
	}
	if claim := s.DataClaim(); claim != "" {
		p.subfield("Data claim:", claim+" (each client's data path is its cluster's value of it)")
	} else {
		p.subfield("Data claim:", "none (no claim selector with operator Exists): clients get no data path")
	}
	if flower {
		p.subfield("SuperNode:", printing.OrDash(s.Client.SuperNode))
	}
}

// subfield writes a "  Label:  value" line under a heading, the values aligned with field's.
func (p *flPrinter) subfield(label, value string) { p.line("  %-14s%s", label, value) }

// wrapped writes a field whose value may be long or span lines: each of its lines wrapped at
// wrapAt, the continuation lines indented under the value.
func (p *flPrinter) wrapped(label, value string) {
	first := true
	for _, l := range strings.Split(strings.TrimSpace(value), "\n") {
		for _, part := range wrap(strings.Fields(l), wrapAt) {
			if first {
				p.field(label, part)
				first = false
			} else {
				p.field("", part)
			}
		}
	}
}

// wrap joins words into lines of at most width characters; a longer word has a line of its own.
func wrap(words []string, width int) []string {
	var lines []string
	cur := ""
	for _, w := range words {
		switch {
		case cur == "":
			cur = w
		case len([]rune(cur))+1+len([]rune(w)) > width:
			lines = append(lines, cur)
			cur = w
		default:
			cur += " " + w
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// cell is s on one line, cut to maxCell characters; "-" when empty.
func (p *flPrinter) cell(s string) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > maxCell {
		p.cut = true
		return string(r[:maxCell-3]) + "..."
	}
	return printing.OrDash(s)
}

func (p *flPrinter) flConditions(conditions []metav1.Condition, clk clock.PassiveClock) {
	if len(conditions) == 0 {
		p.field("Conditions:", "none yet")
		return
	}
	rank := func(c metav1.Condition) int {
		if i := slices.Index(conditionOrder, c.Type); i >= 0 {
			return i
		}
		return len(conditionOrder)
	}
	ordered := slices.Clone(conditions)
	slices.SortStableFunc(ordered, func(a, b metav1.Condition) int { return rank(a) - rank(b) })
	p.line("Conditions:")
	t := printing.NewIndentedTable(p.w, "  ", "TYPE", "STATUS", "REASON", "MESSAGE", "AGE")
	for _, c := range ordered {
		t.Row(c.Type, string(c.Status), printing.OrDash(c.Reason), p.cell(c.Message), printing.Age(c.LastTransitionTime, clk))
	}
	p.flush(t)
}

// clients writes "N running of M decided" (decided: every client not Lost) and a row per cluster.
func (p *flPrinter) clients(cs []flv1alpha1.ClientStatus, clk clock.PassiveClock) {
	if len(cs) == 0 {
		p.field("Clients:", "none: the placement has decided no cluster yet")
		return
	}
	running, decided, lost := 0, 0, 0
	for _, c := range cs {
		switch c.State {
		case flv1alpha1.ClientRunning:
			running++
			decided++
		case flv1alpha1.ClientLost:
			lost++
		default:
			decided++
		}
	}
	summary := fmt.Sprintf("%d running of %d decided", running, decided)
	if lost > 0 {
		summary += fmt.Sprintf(", %d lost", lost)
	}
	p.field("Clients:", summary)
	t := printing.NewIndentedTable(p.w, "  ", "CLUSTER", "STATE", "REASON", "SINCE", "MESSAGE")
	for _, c := range cs {
		since := "-"
		if c.Since != nil {
			since = printing.Age(*c.Since, clk)
		}
		t.Row(c.Cluster, printing.OrDash(string(c.State)), printing.OrDash(c.Reason), since, p.cell(c.Message))
	}
	p.flush(t)
}

// progress writes the last round of all, its metrics one a line, and the clusters each of the
// last lastRounds rounds took.
func (p *flPrinter) progress(pr *flv1alpha1.TrainingProgress, specRounds int32, clk clock.PassiveClock) {
	if pr == nil {
		p.field("Progress:", "none: the server has not reported an aggregated round yet")
		return
	}
	rounds := pr.Rounds
	if rounds == 0 {
		rounds = specRounds
	}
	summary := "round " + strconv.Itoa(int(pr.Round))
	if rounds > 0 {
		summary += " of " + strconv.Itoa(int(rounds))
	}
	if pr.UpdatedAt != nil {
		summary += ", read from the server " + printing.Age(*pr.UpdatedAt, clk) + " ago"
	}
	p.field("Progress:", summary)
	if len(pr.Metrics) == 0 {
		p.subfield("Metrics:", "none reported")
	} else {
		p.line("  Metrics:")
		names := make([]string, 0, len(pr.Metrics))
		for n := range pr.Metrics {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			p.line("    %s = %s", n, oneLine(pr.Metrics[n]))
		}
	}
	if len(pr.RoundClients) == 0 {
		p.subfield("Rounds:", "no round reported its clusters")
		return
	}
	rcs := slices.Clone(pr.RoundClients)
	slices.SortStableFunc(rcs, func(a, b flv1alpha1.RoundClients) int { return int(a.Round) - int(b.Round) })
	if n := len(rcs); n > lastRounds {
		p.subfield("Rounds:", fmt.Sprintf("the last %d of %d reported", lastRounds, n))
		rcs = rcs[n-lastRounds:]
	} else {
		p.line("  Rounds:")
	}
	t := printing.NewIndentedTable(p.w, "    ", "ROUND", "CLUSTERS")
	for _, rc := range rcs {
		clusters := "-"
		if len(rc.Clusters) > 0 {
			clusters = p.cell(strings.Join(rc.Clusters, ", "))
		}
		t.Row(strconv.Itoa(int(rc.Round)), clusters)
	}
	p.flush(t)
}

// listeners writes where the server is reached, as the controller found it.
func (p *flPrinter) listeners(ls []flv1alpha1.ListenerStatus) {
	if len(ls) == 0 {
		p.field("Listeners:", "none")
		return
	}
	p.line("Listeners:")
	t := printing.NewIndentedTable(p.w, "  ", "NAME", "TYPE", "ADDRESS", "PORT")
	for _, l := range ls {
		t.Row(printing.OrDash(l.Name), printing.OrDash(string(l.Type)), printing.OrDash(l.Address), count(l.Port))
	}
	p.flush(t)
}

// timeline writes the last lastEvents entries, oldest first.
func (p *flPrinter) timeline(entries []flv1alpha1.TimelineEntry, clk clock.PassiveClock) {
	if len(entries) == 0 {
		p.field("Timeline:", "none")
		return
	}
	if n := len(entries); n > lastEvents {
		p.field("Timeline:", fmt.Sprintf("the last %d of %d entries", lastEvents, n))
		entries = entries[n-lastEvents:]
	} else {
		p.line("Timeline:")
	}
	t := printing.NewIndentedTable(p.w, "  ", "AGE", "EVENT", "CLUSTER", "MESSAGE")
	for _, e := range entries {
		t.Row(printing.Age(e.Time, clk), printing.OrDash(e.Event), printing.OrDash(e.Cluster), p.cell(e.Message))
	}
	p.flush(t)
}

// isEmptyStatus: the controller has not written the status yet.
func isEmptyStatus(st *flv1alpha1.FederatedLearningStatus) bool {
	return st.Phase == "" && st.Message == "" && len(st.Conditions) == 0 && len(st.Clients) == 0 &&
		st.Progress == nil && len(st.Listeners) == 0 && len(st.Timeline) == 0
}

// specListeners is "server NodePort 31000 (ip 192.0.2.10), ..." for spec.server.listeners.
func specListeners(ls []flv1alpha1.ListenerSpec) string {
	if len(ls) == 0 {
		return "none"
	}
	parts := make([]string, len(ls))
	for i, l := range ls {
		s := strings.TrimSpace(fmt.Sprintf("%s %s %s", l.Name, printing.OrDash(string(l.Type)), count(l.Port)))
		if l.IP != "" {
			s += " (ip " + l.IP + ")"
		}
		parts[i] = s
	}
	return strings.Join(parts, ", ")
}

// storage is "PersistentVolumeClaim model (2Gi) at /models", "HostPath /data/models" or
// "S3Bucket models/resnet/ in bucket b (us-east-1)".
func storage(s flv1alpha1.ModelStorageSpec) string {
	switch s.Type {
	case "":
		return "none"
	case flv1alpha1.StorageTypePersistentVolumeClaim:
		v := "PersistentVolumeClaim " + printing.OrDash(s.Name)
		if s.Size != "" {
			v += " (" + s.Size + ")"
		}
		if s.Path != "" {
			v += " at " + s.Path
		}
		return v
	case flv1alpha1.StorageTypeS3Bucket:
		if s.S3 == nil {
			return "S3Bucket (no s3 set)"
		}
		v := "S3Bucket " + s.S3.BucketName
		if s.S3.Prefix != "" {
			v += "/" + strings.TrimPrefix(s.S3.Prefix, "/")
		}
		if s.S3.Region != "" {
			v += " (" + s.S3.Region + ")"
		}
		return v
	default:
		return strings.TrimSpace(string(s.Type) + " " + s.Path)
	}
}

// count is n, "-" when it is not set (zero).
func count(n int32) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(int(n))
}
