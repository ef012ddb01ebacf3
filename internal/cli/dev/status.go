package dev

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/local/devfleet"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

func newStatusCommand(io streams.IO, stateDir *string) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the health of each cluster of the local fleet",
		Long:  "Shows each cluster's API server, processes, nodes, GPUs and Kueue manager (fleets run with --with kueue). Exits with status 1 when anything is unhealthy.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "json" {
				return fmt.Errorf("--output %q is not supported: use -o json, or leave it out for a table", output)
			}
			st, err := devfleet.Load(*stateDir)
			if err != nil {
				return err
			}
			r := devfleet.Status(cmd.Context(), st)
			if output == "json" {
				enc := json.NewEncoder(io.Out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(r); err != nil {
					return err
				}
			} else {
				if err := printStatus(io, r); err != nil {
					return err
				}
				if cmd := DashboardCommand(st); cmd != "" {
					_, _ = fmt.Fprintf(io.Out, "\nDashboard: %s\n", cmd)
				}
			}
			if !r.Healthy {
				return fmt.Errorf("the fleet is not healthy:\n%s", problems(r))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return cmd
}

func printStatus(io streams.IO, r devfleet.Report) error {
	w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "CLUSTER\tROLE\tAPI\tNODES\tGPUS\tPROCESSES\tKUEUE\tHEALTHY")
	for _, c := range r.Clusters {
		api := "ready"
		if !c.APIReady {
			api = "down"
		}
		var gpus []string
		for _, m := range c.GPUModels() {
			gpus = append(gpus, fmt.Sprintf("%d %s", c.GPUs[m], m))
		}
		if len(gpus) == 0 {
			gpus = []string{"-"}
		}
		running := 0
		kueue := "-"
		for _, p := range c.Processes {
			if p.Running {
				running++
			}
			if p.Component == localk8s.KueueBin {
				kueue = fmt.Sprintf("pid %d", p.PID)
				if !p.Running {
					kueue = "down"
				}
			}
		}
		_, _ = fmt.Fprintf(w, "%s\t%s\t%s\t%d/%d\t%s\t%d/%d\t%s\t%s\n", c.Name, c.Role, api, c.NodesReady, c.Nodes,
			strings.Join(gpus, ", "), running, len(c.Processes), kueue, yesNo(c.Healthy))
	}
	return w.Flush()
}

// DashboardCommand is the command that serves the local fleet's dashboard (docs/dashboard.md),
// "" when the fleet has no hub.
func DashboardCommand(st *devfleet.State) string {
	for _, c := range st.Clusters {
		if c.Role == devfleet.RoleHub {
			return "flotilla dashboard --kubeconfig " + shellQuote(c.Kubeconfig)
		}
	}
	return ""
}

// shellQuote quotes s for a POSIX shell when it holds more than safe characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// problems lists what is wrong, each with the log to read.
func problems(r devfleet.Report) string {
	var b strings.Builder
	for _, c := range r.Clusters {
		for _, p := range c.Processes {
			if !p.Running {
				fmt.Fprintf(&b, "  %s: %s (pid %d) is not running; its log is %s\n", c.Name, p.Component, p.PID, p.Log)
			}
		}
		if !c.APIReady && c.APIError != "" {
			fmt.Fprintf(&b, "  %s: API server not ready: %s\n", c.Name, c.APIError)
		}
		if c.APIReady && c.NodesReady != c.Nodes {
			fmt.Fprintf(&b, "  %s: %d of %d nodes Ready\n", c.Name, c.NodesReady, c.Nodes)
		}
	}
	if b.Len() == 0 {
		b.WriteString("  the shared etcd is not running\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
