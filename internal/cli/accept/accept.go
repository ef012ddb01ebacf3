package accept

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/api/scheme"
	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/hub/registration"
)

// NewCommand returns `flotilla accept`.
func NewCommand(ios streams.IO, clk clock.PassiveClock) *cobra.Command {
	var kube kubeflags.Flags
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "accept CLUSTER...",
		Short: "Accept clusters: approve their certificate requests and set hubAcceptsClient",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			hub, err := kube.Load()
			if err != nil {
				return err
			}
			cfg := hub.Config
			c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			for _, cluster := range args {
				if err := acceptOne(cmd.Context(), ios, c, cs, cluster, wait, clk); err != nil {
					return err
				}
			}
			return nil
		},
	}
	kube.AddFlags(cmd.Flags(), "the hub cluster")
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for the cluster's agent to register and ask for a certificate")
	return cmd
}

func acceptOne(ctx context.Context, ios streams.IO, c client.Client, cs kubernetes.Interface, cluster string, timeout time.Duration, clk clock.PassiveClock) error {
	var res registration.AcceptResult
	var lastErr error
	accept := func(ctx context.Context) (bool, error) {
		res, lastErr = registration.Accept(ctx, c, cs, cluster, registration.AcceptOptions{Clock: clk})
		return lastErr == nil && (len(res.Approved()) > 0 || res.PreviouslyApproved()), nil
	}
	if timeout > 0 {
		_ = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, accept)
	} else {
		_, _ = accept(ctx)
	}
	if lastErr != nil {
		if why := agentreg.ExplainWebhookFailure(lastErr); why != "" {
			return fmt.Errorf("cluster %s was not accepted: %s (%w)", cluster, why, lastErr)
		}
		return lastErr
	}
	return printResult(ios.Out, cluster, res, clk.Now())
}

// printResult says what accept did; with more than one request, or one it did not approve, it
// lists each with its requester, so that an administrator sees a request nobody expected.
func printResult(out io.Writer, cluster string, res registration.AcceptResult, now time.Time) error {
	var b strings.Builder
	switch approved := res.Approved(); {
	case len(approved) > 0:
		fmt.Fprintf(&b, "cluster %s accepted; approved certificate request %s\n", cluster, strings.Join(approved, ", "))
	case res.PreviouslyApproved():
		fmt.Fprintf(&b, "cluster %s is accepted; its agent's certificate was approved before\n", cluster)
	default:
		fmt.Fprintf(&b, "cluster %s accepted, but it has no pending certificate request from its agent's bootstrap identity: "+
			"run accept again once its agent has asked (or use --wait)\n", cluster)
	}
	if len(res.Requests) > 1 || (len(res.Requests) == 1 && res.Requests[0].Outcome != registration.OutcomeApproved) {
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		_, _ = fmt.Fprintln(tw, "REQUEST\tREQUESTER\tAGE\tOUTCOME\tWHY")
		for _, d := range res.Requests {
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Name, d.Requester, duration.HumanDuration(now.Sub(d.Created)), d.Outcome, d.Why)
		}
		_ = tw.Flush()
	}
	_, err := io.WriteString(out, b.String())
	return err
}
