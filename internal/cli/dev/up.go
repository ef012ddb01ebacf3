package dev

import (
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/local/devfleet"
	"github.com/flotilla/flotilla/internal/local/fleet"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/realnode"
)

func newUpCommand(io streams.IO, clk clock.PassiveClock, stateDir *string) *cobra.Command {
	var fleetFile, binDir, flotillaBin, kueueDir, coreDNSDir string
	var with []string
	var realNodes bool
	var images []string
	register := true
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a local fleet and wait until it is ready",
		Long: "Starts a hub and the spoke clusters of a fleet file (the default fleet: gpu-east, gpu-west, edge-1)\n" +
			"as real local control planes, creates their simulated GPU nodes and waits until the nodes are Ready.\n" +
			"With --with kueue (or the fleet file's `with: [kueue]`) Kueue's manager runs on the hub and every spoke.\n" +
			"The fleet keeps running after the command ends; stop it with `flotilla dev down`.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, source := fleet.Default(), "the default fleet"
			if fleetFile != "" {
				var err error
				if spec, err = fleet.Load(fleetFile); err != nil {
					return err
				}
				source = fleetFile
			}
			if errs := fleet.ValidateWith(with, field.NewPath("--with")); len(errs) > 0 {
				return errs.ToAggregate()
			}
			for _, w := range with {
				if !spec.Has(w) {
					spec.With = append(spec.With, w)
				}
			}
			var kueue *localk8s.KueueBinaries
			if spec.Has(fleet.WithKueue) {
				kb, err := findKueue(kueueDir)
				if err != nil {
					return err
				}
				kueue = &kb
			}
			bins := localk8s.Binaries{Dir: binDir}
			if binDir == "" {
				var err error
				if bins, err = localk8s.FindBinaries(); err != nil {
					return err
				}
			} else if err := bins.Check(); err != nil {
				return err
			} else if bins.Dir, err = filepath.Abs(binDir); err != nil {
				return err
			}
			var coreDNS string
			if realNodes || spec.RealNodes {
				var err error
				if coreDNS, err = findCoreDNS(coreDNSDir); err != nil {
					return err
				}
			}
			if register && flotillaBin == "" {
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("finding the flotilla binary to run the hub and agents with: %w; pass --flotilla-bin", err)
				}
				flotillaBin = exe
			}
			if !register {
				flotillaBin = ""
			}
			st, err := devfleet.Up(cmd.Context(), devfleet.UpOptions{
				StateDir: *stateDir, Fleet: spec, FleetSource: source, Binaries: bins, Flotilla: flotillaBin,
				Kueue: kueue, RealNodes: realNodes || spec.RealNodes, CoreDNS: coreDNS, Images: images, Out: io.ErrOut, Clock: clk,
			})
			if err != nil {
				return err
			}
			return printUp(io, st, bins)
		},
	}
	cmd.Flags().StringVarP(&fleetFile, "fleet", "f", "", "fleet file (YAML); the default fleet when empty")
	cmd.Flags().BoolVar(&realNodes, "real-nodes", false, "give the hub and every spoke one real node (kubelet, containerd, a pod network) beside the simulated ones; needs root, containerd, runc and the CNI plugins (the fleet file's realNodes)")
	cmd.Flags().BoolVar(&register, "register", register, "run the Flotilla hub and an agent per spoke, and accept the spokes")
	cmd.Flags().StringArrayVar(&images, "load-image", nil, "with --real-nodes: an image archive to import into every real node, as kind load image-archive (repeatable; make image writes bin/images/flotilla-linux-amd64.tar)")
	cmd.Flags().StringVar(&flotillaBin, "flotilla-bin", "", "flotilla binary for the hub and agents (default: this one)")
	cmd.Flags().StringSliceVar(&with, "with", nil, "extra components to run on the hub and every spoke, added to the fleet file's with: kueue")
	cmd.Flags().StringVar(&kueueDir, "kueue-bin", "", "folder of the Kueue build of tools/build-kueue.sh (default: $"+localk8s.KueueBinDirEnv+", else the build cache)")
	cmd.Flags().StringVar(&coreDNSDir, "coredns-bin", "", "with --real-nodes: folder of the CoreDNS build of tools/build-coredns.sh, the real nodes' cluster DNS (default: $"+realnode.CoreDNSBinDirEnv+", else the build cache)")
	cmd.Flags().StringVar(&binDir, "k8s-bin", "", "folder of the Kubernetes binaries built by tools/build.sh (default: $"+localk8s.BinDirEnv+", else the build cache)")
	return cmd
}

// findCoreDNS finds the CoreDNS binary: in dir when given, else realnode.FindCoreDNS.
func findCoreDNS(dir string) (string, error) {
	if dir == "" {
		return realnode.FindCoreDNS()
	}
	abs, err := filepath.Abs(filepath.Join(dir, realnode.CoreDNSBin))
	if err != nil {
		return "", err
	}
	return abs, realnode.CheckCoreDNS("--coredns-bin", abs)
}

// findKueue finds the Kueue build: dir when given, else FindKueue.
func findKueue(dir string) (localk8s.KueueBinaries, error) {
	if dir == "" {
		return localk8s.FindKueue()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return localk8s.KueueBinaries{}, err
	}
	kb := localk8s.KueueBinaries{Dir: abs}
	return kb, kb.Check()
}

func printUp(io streams.IO, st *devfleet.State, bins localk8s.Binaries) error {
	w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	registered, kueue := "", ""
	for _, p := range st.Processes {
		if p.Component == devfleet.HubComponent {
			registered = ", registered with the Flotilla hub"
		}
		if p.Component == localk8s.KueueBin {
			kueue = ", Kueue " + localk8s.KueueVersion + " on every cluster"
		}
	}
	real := ""
	for _, c := range st.Clusters {
		if c.RealNode != nil {
			real = ", a real node in every cluster (" + devfleet.RealNodeLabel + "=true)"
			break
		}
	}
	_, _ = fmt.Fprintf(w, "\nThe fleet is up: a hub and %d spokes%s%s%s.\n\n", len(st.Clusters)-1, registered, kueue, real)
	_, _ = fmt.Fprintln(w, "CLUSTER\tROLE\tAPI SERVER\tKUBECONFIG")
	for _, c := range st.Clusters {
		_, _ = fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", c.Name, c.Role, c.Server, c.Kubeconfig)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	example := "hub"
	if len(st.Clusters) > 1 {
		example = st.Clusters[1].Name
	}
	_, err := fmt.Fprintf(io.Out, `
Use kubectl with a cluster (kubectl %s is in %s):
  export PATH=%s:$PATH
  kubectl --kubeconfig "$(flotilla dev kubeconfig %s)" get nodes -L %s

Check the fleet with `+"`flotilla dev status`"+`; stop it with `+"`flotilla dev down`"+`.
`, localk8s.KubernetesVersion, bins.Dir, bins.Dir, example, localk8s.GPUProductLabel)
	return err
}
