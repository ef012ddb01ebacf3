//go:build integration

package bench

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/cli"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/procruntime"
)

// flotillaImage is the repository the charts name; the runtime nodes run the built binary for it.
const flotillaImage = "ghcr.io/flotilla/flotilla"

// runtimes are the fleet's process-runtime nodes, one per cluster.
type runtimes struct {
	spokeCS kubernetes.Interface
	stops   []func()
}

func (r *runtimes) stop() {
	for _, s := range r.stops {
		s()
	}
}

// startRuntimes gives every cluster of f a process-runtime node named process-runtime that runs
// bin for the flotilla image, and waits until the nodes are Ready.
func startRuntimes(b *testing.B, f *localk8s.Fleet, bin string) *runtimes {
	r := &runtimes{}
	for _, c := range f.Clusters() {
		cs, err := kubernetes.NewForConfig(c.Config)
		if err != nil {
			b.Fatal(err)
		}
		if c != f.Hub {
			r.spokeCS = cs
		}
		rt := &procruntime.Runtime{
			Root: filepath.Join(c.Dir, "runtime"), Commands: map[string]string{flotillaImage: bin},
			Client: cs, Server: c.Config, Clock: clock.RealClock{},
		}
		stop, err := procruntime.StartNode(context.Background(), rt, "process-runtime", clock.RealClock{}, time.Minute)
		if err != nil {
			r.stop()
			b.Fatalf("%s: %v", c.Name, err)
		}
		r.stops = append(r.stops, stop)
	}
	return r
}

// runCLI runs flotilla's root command in this process and returns its output, each line
// prefixed with the seconds since start; it fails with that output on error.
func runCLI(b *testing.B, start time.Time, args ...string) string {
	io, _, errOut := streams.Buffers()
	out := &stampedWriter{start: start}
	io.Out = out
	root := cli.NewRootCommand(io, clock.RealClock{})
	root.SetArgs(args)
	if err := root.ExecuteContext(context.Background()); err != nil {
		b.Fatalf("flotilla %s: %v\n%s%s", strings.Join(args, " "), err, out.b.String(), errOut)
	}
	return out.b.String()
}

// stampedWriter prefixes each line written to it with the seconds since start.
type stampedWriter struct {
	start time.Time
	b     strings.Builder
	mid   bool
}

func (w *stampedWriter) Write(p []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(p), "\n") {
		if line == "" {
			continue
		}
		if !w.mid {
			fmt.Fprintf(&w.b, "%5.1fs  ", time.Since(w.start).Seconds())
		}
		w.b.WriteString(line)
		w.mid = !strings.HasSuffix(line, "\n")
	}
	return len(p), nil
}

// acceptAndWaitAvailable accepts the cluster as the hub's administrator, as `flotilla accept`
// does, once its agent has asked, and waits until it is Joined and Available.
func acceptAndWaitAvailable(b *testing.B, cfg *rest.Config, cs kubernetes.Interface, cluster string) {
	admin, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var state string
	err = poll(ctx, installWait, func() (bool, error) {
		res, err := registration.Accept(ctx, admin, cs, cluster, registration.AcceptOptions{Clock: clock.RealClock{}})
		if err != nil {
			state = err.Error()
			return false, nil
		}
		state = fmt.Sprintf("%+v", res)
		return len(res.Approved()) > 0 || res.PreviouslyApproved(), nil
	})
	if err != nil {
		b.Fatalf("accepting %s: %v (last: %s)", cluster, err, state)
	}
	err = poll(ctx, installWait, func() (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := admin.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		state = fmt.Sprintf("%+v", mc.Status.Conditions)
		return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined) &&
			meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
	})
	if err != nil {
		b.Fatalf("ManagedCluster %s Joined and Available: %v (conditions %s)", cluster, err, state)
	}
}

// podPID is the process of the one running pod in ns, from the container ID the process runtime
// writes (process://<pid>).
func podPID(b *testing.B, cs kubernetes.Interface, ns string) int {
	pods, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "process://"))
		if err == nil {
			return pid
		}
	}
	b.Fatalf("no running pod with a process in %s", ns)
	return 0
}

func freePort(b *testing.B) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// events lists the events of namespace ns, oldest first, each with the seconds since start.
func events(b *testing.B, cs kubernetes.Interface, ns string, start time.Time) string {
	list, err := cs.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	at := func(e eventsv1.Event) time.Time {
		if !e.EventTime.IsZero() {
			return e.EventTime.Time
		}
		return e.DeprecatedFirstTimestamp.Time
	}
	slices.SortFunc(list.Items, func(a, b eventsv1.Event) int { return at(a).Compare(at(b)) })
	var out strings.Builder
	for _, e := range list.Items {
		fmt.Fprintf(&out, "%5.1fs  %s %s/%s: %s\n", at(e).Sub(start).Seconds(), e.Reason, e.Regarding.Kind, e.Regarding.Name, e.Note)
	}
	return out.String()
}
