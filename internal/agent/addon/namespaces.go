package addon

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/flotilla/flotilla/internal/agent/registration"
)

// CreatedByLabel marks a namespace the agent created on the spoke (DefaultInstallNamespace); its
// value is CreatedByAgent. The agent never deletes a namespace, and one without this label was
// made by someone else.
const (
	CreatedByLabel = "addon.flotilla.io/created-by"
	CreatedByAgent = "flotilla-agent"
)

// errNamespaceMissing: a Secret could not be stored because its namespace does not exist yet.
// The registration waits for the namespace (the namespace watch wakes it) rather than backing off.
var errNamespaceMissing = errors.New("namespace does not exist")

// spokeNamespaces watches the spoke's namespaces, so that the agent creates the default add-on
// namespace again at once when it is deleted, and stores the credentials that wait for a
// namespace as soon as it is created.
type spokeNamespaces struct {
	mu sync.Mutex
	// synced is set once the watch has listed the namespaces; exists answers from it.
	synced bool
	names  map[string]bool
	// waiting are the namespaces that credentials wait for.
	waiting map[string]bool
	// ready is set when a namespace that something waits for is created (or deleted, for the
	// default one, which the agent then creates again).
	ready registration.Shared[struct{}]
}

// wait records that credentials wait for namespace ns.
func (n *spokeNamespaces) wait(ns string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.waiting == nil {
		n.waiting = map[string]bool{}
	}
	n.waiting[ns] = true
}

// exists says whether namespace ns exists, and false for known when the watch has not synced.
func (n *spokeNamespaces) exists(ns string) (exists, known bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.names[ns], n.synced
}

// event records a namespace that was created (present) or deleted or is being deleted, and
// wakes the loops when it matters to them: a namespace that credentials wait for appeared, or the
// default add-on namespace went (the agent creates it again).
func (n *spokeNamespaces) event(ns string, present bool) {
	n.mu.Lock()
	if n.names == nil {
		n.names = map[string]bool{}
	}
	had := n.names[ns]
	if present {
		n.names[ns] = true
	} else {
		delete(n.names, ns)
	}
	wake := (present && !had && n.waiting[ns]) || (!present && ns == DefaultInstallNamespace)
	if present {
		delete(n.waiting, ns)
	}
	n.mu.Unlock()
	if wake {
		n.ready.Set(struct{}{})
	}
}

func (n *spokeNamespaces) setSynced() {
	n.mu.Lock()
	n.synced = true
	n.mu.Unlock()
	n.ready.Set(struct{}{})
}

// namespaceName is the name of a Namespace from an informer's event object.
func namespaceName(o any) (string, bool) {
	if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	ns, ok := o.(*corev1.Namespace)
	if !ok {
		return "", false
	}
	return ns.Name, true
}

// watchNamespacesStep runs the watch of the spoke's namespaces until ctx ends. It does not
// depend on the hub.
func (a *Agent) watchNamespacesStep(ctx context.Context) (time.Duration, error) {
	if a.nsWatching {
		return idle, nil
	}
	f := informers.NewSharedInformerFactory(a.spoke, 0)
	inf := f.Core().V1().Namespaces().Informer()
	// A namespace being deleted is treated as gone: nothing can be created in it.
	present := func(o any) bool {
		ns, ok := o.(*corev1.Namespace)
		return ok && ns.DeletionTimestamp.IsZero()
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			if name, ok := namespaceName(o); ok {
				a.namespaces.event(name, present(o))
			}
		},
		UpdateFunc: func(_, o any) {
			if name, ok := namespaceName(o); ok {
				a.namespaces.event(name, present(o))
			}
		},
		DeleteFunc: func(o any) {
			if name, ok := namespaceName(o); ok {
				a.namespaces.event(name, false)
			}
		},
	}); err != nil {
		return 0, err
	}
	go inf.Run(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return 0, ctx.Err()
	}
	a.nsWatching = true
	a.namespaces.setSynced()
	return idle, nil
}

// defaultNamespaceStep creates DefaultInstallNamespace on the spoke when it does not exist, as
// OCM's klusterlet does for its add-ons (unless DisableDefaultAddOnNamespace): OCM's add-ons
// install their agents there and their ManifestWorks do not create it. The namespace is labeled
// CreatedByLabel; the agent never deletes it.
func (a *Agent) defaultNamespaceStep(ctx context.Context) (time.Duration, error) {
	if a.opts.DisableDefaultAddOnNamespace {
		return idle, nil
	}
	if exists, known := a.namespaces.exists(DefaultInstallNamespace); known && exists {
		return idle, nil
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DefaultInstallNamespace, Labels: map[string]string{CreatedByLabel: CreatedByAgent}}}
	_, err := a.spoke.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	switch {
	case err == nil:
		a.opts.Log.Info("created the add-on namespace on the spoke, as OCM's klusterlet does", "namespace", DefaultInstallNamespace)
	case apierrors.IsAlreadyExists(err):
		// Someone's, or ours being deleted: the watch says when it is gone.
	default:
		return 0, fmt.Errorf("creating namespace %s on the spoke, where OCM's add-ons install their agents (the agent's spoke identity needs create on namespaces; "+
			"or run the agent with --disable-default-addon-namespace and create it yourself): %w", DefaultInstallNamespace, err)
	}
	return idle, nil
}
