package scheduler

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/yaml"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

var update = flag.Bool("update", false, "rewrite the expected output of testdata/*.yaml")

// wantMarker separates a golden file's input from its expected output.
const wantMarker = "\n--- # want: rewritten by go test ./internal/core/scheduler/ -update\n"

// goldenInput is the input half of a golden file.
type goldenInput struct {
	Now       time.Time                `json:"now"`
	Placement clusterv1beta1.Placement `json:"placement"`
	Snapshot  Snapshot                 `json:"snapshot"`
}

// goldenOutput is the deterministic rendering of a Result, compact enough to review as a diff.
type goldenOutput struct {
	Misconfigured      bool                     `json:"misconfigured,omitempty"`
	RequeueAfter       string                   `json:"requeueAfter,omitempty"`
	LastScoreUpdate    string                   `json:"lastScoreUpdateTime,omitempty"`
	Conditions         []string                 `json:"conditions"`
	Decisions          []Decision               `json:"decisions"`
	Groups             []string                 `json:"groups"`
	PlacementDecisions []string                 `json:"placementDecisions"`
	Clusters           map[string]goldenCluster `json:"clusters"`
}

type goldenCluster struct {
	Selected   bool     `json:"selected"`
	FilteredBy string   `json:"filteredBy,omitempty"`
	Message    string   `json:"message,omitempty"`
	Rank       int      `json:"rank,omitempty"`
	Total      int64    `json:"total,omitempty"`
	Scores     string   `json:"scores,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
}

func render(r Result) []byte {
	out := goldenOutput{Misconfigured: r.Misconfigured, Decisions: r.Decisions, Clusters: map[string]goldenCluster{}}
	if r.RequeueAfter > 0 {
		out.RequeueAfter = r.RequeueAfter.String()
	}
	if r.LastScoreUpdateTime != nil {
		out.LastScoreUpdate = r.LastScoreUpdateTime.UTC().Format(time.RFC3339)
	}
	for _, c := range r.Conditions {
		out.Conditions = append(out.Conditions, c.Type+"="+string(c.Status)+" "+c.Reason+": "+c.Message)
	}
	for _, g := range r.Groups {
		out.Groups = append(out.Groups, fmt.Sprintf("%d %q: %s", g.Index, g.Name, strings.Join(g.Clusters, " ")))
	}
	for _, pd := range r.PlacementDecisions {
		names := make([]string, len(pd.Decisions))
		for i, d := range pd.Decisions {
			names[i] = d.ClusterName
		}
		out.PlacementDecisions = append(out.PlacementDecisions, fmt.Sprintf("%s placement=%s group=%s/%q: %s", pd.Name,
			pd.Labels[clusterv1beta1.PlacementLabel], pd.Labels[clusterv1beta1.DecisionGroupIndexLabel],
			pd.Labels[clusterv1beta1.DecisionGroupNameLabel], strings.Join(names, " ")))
	}
	for _, c := range r.Clusters {
		scores := make([]string, len(c.Scores))
		for i, s := range c.Scores {
			scores[i] = fmt.Sprintf("%s %d x%d", s.Prioritizer, s.Score, s.Weight)
			if s.Detail != "" {
				scores[i] += " (" + s.Detail + ")"
			}
		}
		out.Clusters[c.Name] = goldenCluster{Selected: c.Selected, FilteredBy: c.FilteredBy, Message: c.Message,
			Rank: c.Rank, Total: c.TotalScore, Scores: strings.Join(scores, ", "), Warnings: c.Warnings}
	}
	b, err := yaml.Marshal(out)
	if err != nil {
		panic(err)
	}
	return b
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			input, want, _ := bytes.Cut(data, []byte(wantMarker))
			var in goldenInput
			if err := yaml.UnmarshalStrict(input, &in); err != nil {
				t.Fatalf("%s: input: %v", file, err)
			}
			got := render(Schedule(&in.Placement, &in.Snapshot, in.Now))
			if *update {
				out := append(append(bytes.TrimRight(input, "\n"), []byte(wantMarker)...), got...)
				if err := os.WriteFile(file, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s: Schedule() mismatch (-want +got), rerun with -update and review:\n%s", file, diff)
			}
			// The controller's brief scheduling decides exactly the same, without the
			// explanation of every cluster.
			full := Schedule(&in.Placement, &in.Snapshot, in.Now)
			full.Clusters = nil
			brief := (&Scheduler{Plugins: DefaultPlugins(), Brief: true}).schedule(&in.Placement, &in.Snapshot, in.Now)
			if diff := cmp.Diff(full, brief, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: brief Schedule() differs from the full one without its explanation (-full +brief):\n%s", file, diff)
			}
		})
	}
}
