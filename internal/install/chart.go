package install

import (
	"context"
	"fmt"
	"io"
	"time"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/charts"
)

// Chart says which chart to install where, as `helm install NAME CHART -n NS --create-namespace
// --set ...` would, and which Deployment must turn ready.
type Chart struct {
	Chart string
	// Loaded, when set, is the chart to install instead of the embedded one named Chart (tests
	// install an earlier version of it).
	Loaded  *chartv2.Chart
	Release charts.Release
	Values  map[string]any
	// Deployment is the Deployment whose readiness ends the install.
	Deployment string
	// Timeout bounds the wait for the Deployment; zero does not wait.
	Timeout time.Duration
	// Ready, when set, is what must also hold once the Deployment is ready (the hub's webhook
	// answering through its Service); an error from it fails the install.
	Ready func(ctx context.Context) error
	// RollbackOnFailure puts the cluster back as it was when the install fails after it changed
	// something (an object refused, the Deployment not ready in Timeout, Ready failing): a first
	// install is removed, an upgrade returns to the objects of the version before (CRDs stay).
	RollbackOnFailure bool
	Out               io.Writer
	Clock             clock.Clock
}

// InstallChart renders c's chart and installs it: the namespace, the chart's CRDs (server-side
// apply, until Established), then its objects (server-side apply), and waits for the
// Deployment. Values that do not render, and objects the API server refuses in a dry run, stop
// it before anything is changed (the namespaces it made for the dry run, the release's and those
// the chart renders, are removed again).
func InstallChart(ctx context.Context, cfg *rest.Config, c Chart) (*charts.Rendered, error) {
	ch, err := c.load()
	if err != nil {
		return nil, err
	}
	// Rendered against the cluster, so that what the chart keeps (the webhook certificate) is kept.
	r, err := charts.RenderIn(cfg, ch, c.Release, c.Values)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w (nothing was installed)", c.Chart, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	say := func(format string, args ...any) {
		if c.Out != nil {
			_, _ = fmt.Fprintf(c.Out, format+"\n", args...)
		}
	}
	ns := c.Release.Namespace
	// The dry run of objects in a namespace needs the namespace: the release's, and those the
	// chart renders (the hub chart's flower-system), which the apply then labels as the chart's.
	namespaces := []string{ns}
	for _, o := range r.Objects {
		if o.GetKind() == "Namespace" && o.GetAPIVersion() == "v1" && o.GetName() != ns {
			namespaces = append(namespaces, o.GetName())
		}
	}
	var made []string
	for _, name := range namespaces {
		created, err := ensureNamespace(ctx, cs, name)
		if err != nil {
			return nil, err
		}
		if created {
			made = append(made, name)
		}
	}
	if err := Objects(ctx, cfg, r.Objects, true, nil); err != nil {
		for _, name := range made {
			_ = cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
		}
		return nil, fmt.Errorf("the API server refuses %s as rendered: %w (nothing was installed)", c.Chart, err)
	}
	crds := make([]*apiextv1.CustomResourceDefinition, 0, len(r.CRDs))
	for _, u := range r.CRDs {
		crd := &apiextv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
			return nil, fmt.Errorf("chart %s: CRD %s: %w", c.Chart, u.GetName(), err)
		}
		crds = append(crds, crd)
	}
	old, oldVersion, err := readInventory(ctx, cs, ns, c.Release.Name)
	if err != nil {
		return nil, err
	}
	var snap *snapshot
	if c.RollbackOnFailure {
		refs := append([]objectRef{{"v1", "ConfigMap", ns, c.Release.Name + inventorySuffix}}, old...)
		for _, o := range r.Objects {
			refs = append(refs, refOf(o))
		}
		if snap, err = takeSnapshot(ctx, cfg, refs); err != nil {
			return nil, err
		}
	}
	err = c.apply(ctx, cfg, cs, r, crds, old, oldVersion, ch.Metadata.Version, say)
	if err == nil || snap == nil {
		return r, err
	}
	// The rollback runs even when ctx was canceled (an interrupted install), within its own bound.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	to := "removing what it installed"
	if oldVersion != "" {
		to = "rolling back to " + c.Chart + " " + oldVersion
	}
	say("the install failed: %s", to)
	if rerr := snap.restore(rctx, cfg, c.Release.Name, made, c.Out); rerr != nil {
		return r, fmt.Errorf("%w\n%s failed too: %v", err, to, rerr)
	}
	if oldVersion != "" && c.Timeout > 0 && c.Deployment != "" {
		if werr := WaitDeployment(rctx, cs, ns, c.Deployment, c.Timeout, c.Out, c.Clock); werr != nil {
			return r, fmt.Errorf("%w\nrolled back to %s %s, which is not ready either: %v", err, c.Chart, oldVersion, werr)
		}
	}
	if oldVersion != "" {
		return r, fmt.Errorf("%w\nrolled back: %s %s runs as before", err, c.Chart, oldVersion)
	}
	return r, fmt.Errorf("%w\nrolled back: nothing of %s is left but its CRDs (run with --rollback-on-failure=false to keep a failed install for inspection)", err, c.Chart)
}

// apply is the install's part that changes the cluster: CRDs, objects, removal of what the
// version before had, the inventory, then the waits.
func (c Chart) apply(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, r *charts.Rendered,
	crds []*apiextv1.CustomResourceDefinition, old []objectRef, oldVersion, version string, say func(string, ...any)) error {
	ns := c.Release.Namespace
	say("installing %d CRDs", len(crds))
	if _, err := CRDs(ctx, cfg, crds, Options{}); err != nil {
		return err
	}
	say("applying %d objects of %s %s in %s", len(r.Objects), c.Chart, version, ns)
	if err := Objects(ctx, cfg, r.Objects, false, nil); err != nil {
		return err
	}
	// What the installed version made and this one does not render goes, as with helm upgrade.
	if gone := stale(old, r.Objects, c.Release.Name); len(gone) > 0 {
		say("removing %d objects that %s %s had and %s does not", len(gone), c.Chart, oldVersion, version)
		if _, err := Remove(ctx, cfg, gone, c.Out); err != nil {
			return err
		}
	}
	if err := writeInventory(ctx, cs, ns, c.Release.Name, version, r.Objects); err != nil {
		return err
	}
	if c.Timeout > 0 && c.Deployment != "" {
		say("waiting up to %s for deployment %s/%s", c.Timeout, ns, c.Deployment)
		if err := WaitDeployment(ctx, cs, ns, c.Deployment, c.Timeout, c.Out, c.Clock); err != nil {
			return err
		}
	}
	if c.Ready != nil {
		return c.Ready(ctx)
	}
	return nil
}

// UninstallChart removes what InstallChart installed for the same chart and release: every
// rendered object that carries Flotilla's labels of that release. It keeps the CRDs (deleting
// them would delete every object of their kinds, as Helm keeps them too) and the namespaces, the
// release's and those the chart renders (the hub chart's flower-system).
func UninstallChart(ctx context.Context, cfg *rest.Config, c Chart) ([]string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	old, _, err := readInventory(ctx, cs, c.Release.Namespace, c.Release.Name)
	if err != nil {
		return nil, err
	}
	if old != nil {
		// Exactly what the last install applied, then the inventory itself.
		objs := stale(old, nil, c.Release.Name)
		inv := objectRef{"v1", "ConfigMap", c.Release.Namespace, c.Release.Name + inventorySuffix}
		return Remove(ctx, cfg, append([]*unstructured.Unstructured{inv.object(c.Release.Name)}, objs...), c.Out)
	}
	ch, err := c.load()
	if err != nil {
		return nil, err
	}
	r, err := charts.Render(ch, c.Release, c.Values)
	if err != nil {
		return nil, fmt.Errorf("rendering %s to know what it installed: %w", c.Chart, err)
	}
	return Remove(ctx, cfg, r.Objects, c.Out)
}

func (c Chart) load() (*chartv2.Chart, error) {
	if c.Loaded != nil {
		return c.Loaded, nil
	}
	return charts.Load(c.Chart)
}

func ensureNamespace(ctx context.Context, cs kubernetes.Interface, ns string) (created bool, err error) {
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	return true, nil
}
