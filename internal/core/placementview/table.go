package placementview

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// WriteTable writes res, the result of scheduling ns/name, for a reader: a heading with the
// selected count, the conditions, then every member of the eligible sets, one line each, those
// that passed the filters by rank and the filtered ones by name, with each prioritizer's weight
// and score, the total, the decision group, and why it was filtered or not chosen.
func WriteTable(w io.Writer, ns, name string, res *scheduler.Result) error {
	selected := 0
	for _, c := range res.Clusters {
		if c.Selected {
			selected++
		}
	}
	if _, err := fmt.Fprintf(w, "Placement %s/%s: %d of %d clusters selected\n", ns, name, selected, len(res.Clusters)); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 6, 4, 3, ' ', 0)
	row := func(cells ...string) { _, _ = fmt.Fprintln(tw, strings.Join(cells, "\t")) }
	row("CONDITION", "STATUS", "REASON", "MESSAGE")
	for _, c := range res.Conditions {
		row(c.Type, string(c.Status), c.Reason, c.Message)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if res.Misconfigured {
		_, err := fmt.Fprintln(w, "\nThe placement is misconfigured, so nothing is scheduled and the hub keeps the decisions it has:\n"+
			"fix the field the PlacementMisconfigured message names.")
		return err
	}
	if len(res.Clusters) == 0 {
		_, err := fmt.Fprintln(w, "\nNo cluster is a member of the eligible cluster sets.")
		return err
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	groups := make(map[string]scheduler.Decision, len(res.Decisions))
	for _, d := range res.Decisions {
		groups[d.ClusterName] = d
	}
	row("RANK", "CLUSTER", "RESULT", "GROUP", "TOTAL", "SCORES (WEIGHT*SCORE)", "WHY")
	for _, c := range ordered(res.Clusters) {
		rank, total, scores, group := "-", "-", "-", "-"
		if c.Rank > 0 {
			rank, total = strconv.Itoa(c.Rank), strconv.FormatInt(c.TotalScore, 10)
			scores = formatScores(c.Scores)
		}
		result := "not chosen"
		switch {
		case c.FilteredBy != "":
			result = "filtered"
		case c.Selected:
			result = "selected"
			d := groups[c.Name]
			group = strconv.Itoa(int(d.DecisionGroupIndex))
			if d.DecisionGroupName != "" {
				group += " " + d.DecisionGroupName
			}
		}
		row(rank, c.Name, result, group, total, scores, why(c))
	}
	return tw.Flush()
}

// ordered is clusters that passed the filters by rank, then the filtered ones by name.
func ordered(clusters []scheduler.ClusterExplanation) []scheduler.ClusterExplanation {
	out := slices.Clone(clusters)
	slices.SortStableFunc(out, func(a, b scheduler.ClusterExplanation) int {
		if (a.Rank == 0) != (b.Rank == 0) {
			if a.Rank == 0 {
				return 1
			}
			return -1
		}
		if c := cmp.Compare(a.Rank, b.Rank); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

func formatScores(scores []scheduler.PrioritizerScore) string {
	if len(scores) == 0 {
		return "-"
	}
	parts := make([]string, len(scores))
	for i, s := range scores {
		parts[i] = fmt.Sprintf("%s %d*%d", s.Prioritizer, s.Weight, s.Score)
		if s.Detail != "" {
			parts[i] += " (" + s.Detail + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// why is the plugin that filtered the cluster and its message, or the message and warnings.
func why(c scheduler.ClusterExplanation) string {
	if c.FilteredBy != "" {
		return c.FilteredBy + ": " + c.Message
	}
	if m := message(c); m != "" {
		return m
	}
	return "-"
}
