package federatedlearning

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
	"github.com/flotilla/flotilla/internal/egress"
	"github.com/flotilla/flotilla/internal/hub/addon"
	"github.com/flotilla/flotilla/internal/hub/workreplicaset"
)

// flower runs the Flower path: the ServerApp on the hub, the ClientApps through the
// ManifestWorkReplicaSet, the data paths (and, with the federation's own SuperLink, the
// SuperNodes) through per-cluster works. A federation that names flower-addon's SuperLink (the
// default) gets a SuperLink of its own (superlink.go); one that names another SuperLink uses it.
func (r *Reconciler) flower(ctx context.Context, fl *flv1alpha1.FederatedLearning, o *observed, conflict func(error) error) error {
	if len(o.Decided) < minClients(fl) {
		hint, err := r.flowerHint(ctx)
		if err != nil {
			return err
		}
		o.Hint = hint
	}
	var own *ownLink
	target := linkTarget{Address: superLinkOrDefault(fl.Spec.Server.SuperLink), Insecure: fl.Spec.Server.SuperLinkInsecure}
	if usesFlowerAddOn(fl.Spec.Server.SuperLink) {
		l, err := r.ownSuperLink(ctx, fl, sortedKeys(dataPaths(o)))
		if err := conflict(err); err != nil {
			return err
		}
		if l == nil { // a conflict, recorded
			return nil
		}
		own, target = l, l.target(fl)
		o.ServerListener = &flv1alpha1.ListenerStatus{Name: "superlink", Type: flv1alpha1.ListenerTypeNodePort, Address: r.SuperLinks.Host, Port: l.Port}
	}
	if err := r.flowerServerApp(ctx, fl, o, own, target, conflict); err != nil {
		return err
	}
	if own != nil && own.Available && o.ServerReady && r.Flower != nil {
		stale, err := r.Flower.SyncNodes(ctx, fl, target, own.publicKeys)
		if err == nil && len(stale) > 0 {
			err = r.dropNodeKeys(ctx, fl, stale)
			if err == nil {
				err = fmt.Errorf("the SuperNode keys of %v were unregistered, and Flower never admits a key again: they get new keys", stale)
			}
		}
		if err != nil {
			o.ServerReady, o.ServerReason = false, ReasonSuperNodesNotRegistered
			o.ServerMessage = fmt.Sprintf("registering the client clusters' SuperNode keys with the federation's SuperLink %s: %v", superLinkName(fl), err)
		}
	}
	if err := r.flowerClientApps(ctx, fl, o, own, conflict); err != nil {
		return err
	}
	o.Progress = r.flowerProgress(ctx, fl, o, target)
	return nil
}

// flowerServerApp keeps the ServerApp's Deployment and says in o whether it (and the
// federation's own SuperLink, when it has one) is available.
func (r *Reconciler) flowerServerApp(ctx context.Context, fl *flv1alpha1.FederatedLearning, o *observed, own *ownLink, target linkTarget, conflict func(error) error) error {
	desired := desiredServerApp(fl, target.Insecure)
	if own != nil {
		desired = desiredOwnServerApp(fl, own.Port, podSecretName(fl, own.Material))
	}
	d := &appsv1.Deployment{}
	if err := conflict(r.ensure(ctx, fl, "Deployment", desired, d, true)); err != nil {
		return err
	}
	o.ServerReady = d.Status.AvailableReplicas > 0
	o.ServerReason, o.ServerMessage = "ServerAppNotAvailable", fmt.Sprintf("Deployment %s has no available replica yet", serverAppName(fl))
	switch {
	case own != nil && !own.Available:
		o.ServerReady, o.ServerReason = false, "SuperLinkNotAvailable"
		o.ServerMessage = fmt.Sprintf("the federation's own SuperLink (Deployment %s) has no available replica yet", superLinkName(fl))
	case own != nil && o.ServerReady:
		o.ServerMessage = fmt.Sprintf("Deployment %s is available; it talks to the federation's own SuperLink %s (clusters reach it at %s:%d); "+
			"submit runs through `kubectl port-forward -n %s deployment/%s %d` to 127.0.0.1:%d (insecure, the pod's loopback)",
			serverAppName(fl), superLinkName(fl), r.SuperLinks.Host, own.Port, fl.Namespace, superLinkName(fl), own.Port, own.Port)
	case o.ServerReady:
		o.ServerMessage = fmt.Sprintf("Deployment %s is available; it talks to the SuperLink at %s", serverAppName(fl), target.Address)
	}
	return nil
}

// flowerClientApps keeps the clients. With the federation's own SuperLink (own), one work per
// client cluster carries all it runs (ownClientWork); the works of clusters no longer decided go.
// Otherwise OCM's ManifestWorkReplicaSet <name>-clientapp (once enough clients are decided, and
// from then on) and, with a data claim, one data work per client. A work another owner holds
// excludes its client.
func (r *Reconciler) flowerClientApps(ctx context.Context, fl *flv1alpha1.FederatedLearning, o *observed, own *ownLink, conflict func(error) error) error {
	paths := dataPaths(o)
	if own != nil {
		// A federation made before federations had SuperLinks of their own has OCM's replica set
		// and data works: they go, so that no cluster runs two clients.
		if err := r.deleteReplicaSet(ctx, fl); err != nil {
			return err
		}
		if err := r.deleteStaleWorks(ctx, fl, o, dataWorkName(fl), nil); err != nil {
			return err
		}
		return r.clientWorks(ctx, fl, o, clientWorkName(fl), paths, func(c string) *workv1.ManifestWork {
			return desiredOwnClientWork(fl, c, paths[c], r.SuperLinks, own)
		})
	}
	set := &workv1alpha1.ManifestWorkReplicaSet{}
	exists := r.Client.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: clientAppName(fl)}, set) == nil
	if exists || len(o.Decided) >= minClients(fl) {
		desired, err := desiredClientApp(fl)
		if err != nil {
			return err
		}
		desired.Labels[NamespaceLabel] = fl.Namespace // copied to its works, so their events find fl
		if err := conflict(r.ensure(ctx, fl, "ManifestWorkReplicaSet", desired, set, true)); err != nil {
			return err
		}
	}
	if dataClaim(&fl.Spec) != "" {
		for _, c := range sortedKeys(paths) {
			w, err := desiredDataWork(fl, c, paths[c])
			if err != nil {
				return err
			}
			if err := r.ensure(ctx, fl, "ManifestWork", w, &workv1.ManifestWork{}, true); isConflict(err) {
				o.Clients[c] = clientState{Excluded: true, Reason: ReasonNameConflict, Message: err.Error()}
			} else if err != nil {
				return err
			}
		}
	}
	if err := r.deleteStaleWorks(ctx, fl, o, dataWorkName(fl), paths); err != nil {
		return err
	}
	return r.observeClientApps(ctx, fl, o)
}

// deleteReplicaSet deletes fl's ManifestWorkReplicaSet <name>-clientapp if fl made it.
func (r *Reconciler) deleteReplicaSet(ctx context.Context, fl *flv1alpha1.FederatedLearning) error {
	set := &workv1alpha1.ManifestWorkReplicaSet{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: clientAppName(fl)}, set)
	if err != nil || !mine(fl, set) {
		return client.IgnoreNotFound(err)
	}
	return client.IgnoreNotFound(r.Client.Delete(ctx, set))
}

// observeClientApps records, for each decided client not excluded, whether the replica set's work
// reached its cluster and was applied there.
func (r *Reconciler) observeClientApps(ctx context.Context, fl *flv1alpha1.FederatedLearning, o *observed) error {
	for _, c := range o.Decided {
		cs := o.Clients[c]
		if cs.Excluded {
			continue
		}
		w := &workv1.ManifestWork{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: clientAppName(fl)}, w)
		if client.IgnoreNotFound(err) != nil {
			return err
		}
		if err == nil && w.Labels[workreplicaset.SetLabel] == fl.Namespace+"."+clientAppName(fl) {
			cs.Delivered = true
			cs.Applied = meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkApplied)
		}
		o.Clients[c] = cs
	}
	return nil
}

// flowerProgress reads the federation's Flower run (FlowerRuns) through the SuperLink (the ServerApp's output is
// only there). A finished run ends the federation: completed is
// Completed, failed or stopped is Failed with Flower's details. A SuperLink the egress guard
// refuses is said in ServerReady.
func (r *Reconciler) flowerProgress(ctx context.Context, fl *flv1alpha1.FederatedLearning, o *observed, target linkTarget) *Progress {
	if r.Flower == nil {
		return nil
	}
	run, err := r.Flower.Read(ctx, fl, target)
	if errors.Is(err, egress.ErrRefused) {
		o.ServerReady, o.ServerReason = false, ReasonSuperLinkRefused
		o.ServerMessage = fmt.Sprintf("the hub refuses to reach spec.server.superlink %q: %v; %s",
			superLinkOrDefault(fl.Spec.Server.SuperLink), err, superLinkFix)
		return nil
	}
	if err != nil {
		ctrlLog(ctx).V(1).Info("reading the Flower run", "error", err.Error())
		return nil
	}
	if run == nil {
		if fl.Status.FlowerRunID == "" && o.ServerReady {
			o.ServerMessage += fmt.Sprintf("; the hub follows only a run that names this federation: submit it with "+
				"`flwr run <app> <superlink> --run-config '%s=\"%s\"'`", RunConfigKey, fl.UID)
		}
		return nil
	}
	o.RunID = strconv.FormatUint(run.ID, 10)
	p := ParseProgress(run.Log)
	if run.Status == "finished" {
		p.Seen = true
		if run.SubStatus == "completed" {
			p.Finished = true
		} else {
			p.Failed = fmt.Sprintf("Flower run %d finished %s: %s", run.ID, run.SubStatus, nonEmpty(run.Details, "no details"))
		}
	}
	return &p
}

// flowerHint names clusters where flower-addon is not available, since the placement only
// chooses clusters where it is.
func (r *Reconciler) flowerHint(ctx context.Context) (string, error) {
	l := &clusterv1.ManagedClusterList{}
	if err := r.Client.List(ctx, l); err != nil {
		return "", err
	}
	var off []string
	for _, mc := range l.Items {
		if mc.Labels[addon.FeatureLabelPrefix+FlowerAddOn] != "available" {
			off = append(off, mc.Name)
		}
	}
	if len(off) == 0 {
		return "", nil
	}
	sort.Strings(off)
	shown := off[:min(len(off), 5)]
	what := fmt.Sprintf("%d clusters", len(off))
	if len(off) == 1 {
		what = "1 cluster"
	}
	return fmt.Sprintf("flower-addon is not available on %s (%s), and a Flower client goes only where it is: enable it with `flotilla addon enable %s --clusters %s`",
		what, strings.Join(shown, ", "), FlowerAddOn, strings.Join(shown, ",")), nil
}

// openFL runs the OpenFL (and other) path: storage, Service and server Job on the hub, a
// ManifestWork with the client Job per decided cluster.
func (r *Reconciler) openFL(ctx context.Context, fl *flv1alpha1.FederatedLearning, o *observed, conflict func(error) error) error {
	if fl.Spec.Server.Storage.Type == flv1alpha1.StorageTypePersistentVolumeClaim {
		if err := conflict(r.ensure(ctx, fl, "PersistentVolumeClaim", desiredPVC(fl), &corev1.PersistentVolumeClaim{}, false)); err != nil {
			return err
		}
	}
	svc := &corev1.Service{}
	if err := conflict(r.ensure(ctx, fl, "Service", desiredService(fl), svc, true)); err != nil {
		return err
	}
	if len(o.Conflicts) > 0 {
		return nil
	}
	nodeIP, err := r.hubNodeIP(ctx)
	if err != nil {
		return err
	}
	ep := listenerEndpoint(fl, svc, nodeIP)
	if ep.Address != "" {
		l := fl.Spec.Server.Listeners[0]
		o.ServerListener = &flv1alpha1.ListenerStatus{Name: l.Name, Type: l.Type, Address: ep.Address, Port: ep.Port}
	}
	paths := dataPaths(o)
	j := &batchv1.Job{}
	jobErr := r.Client.Get(ctx, client.ObjectKey{Namespace: fl.Namespace, Name: serverName(fl)}, j)
	if client.IgnoreNotFound(jobErr) != nil {
		return jobErr
	}
	haveJob := jobErr == nil
	switch {
	case ep.Address == "":
		o.ServerReason, o.ServerMessage = "ListenerPending", fmt.Sprintf("Service %s has no address yet for spec.server.listeners[0]", serverName(fl))
	case !haveJob && len(paths) < minClients(fl):
		o.ServerReason, o.ServerMessage = "WaitingForClients", "the server Job starts once enough clusters are decided"
	default:
		if err := conflict(r.ensure(ctx, fl, "Job", desiredServerJob(fl, ep, sortedKeys(paths)), j, false)); err != nil {
			return err
		}
		o.ServerReady, o.ServerMessage = true, fmt.Sprintf("Job %s serves at %s:%d", serverName(fl), ep.Address, ep.Port)
		o.ServerSucceeded, o.ServerFailed, o.ServerFailure = serverJobState(j)
	}
	if o.ServerReady {
		// Works named <name>, as OCM names them and Flotilla did, go: their names are shared by
		// federations of one name in two namespaces.
		if err := r.deleteStaleWorks(ctx, fl, o, fl.Name, nil); err != nil {
			return err
		}
		// Works of clusters no longer decided go (OCM's stay).
		return r.clientWorks(ctx, fl, o, clientWorkName(fl), paths, func(c string) *workv1.ManifestWork {
			return desiredClientWork(fl, c, paths[c], ep)
		})
	}
	return nil
}

// clientWorks keeps one work, name, per client cluster (the keys of paths, made by desired) and
// records whether each reached its cluster and was applied there; a work of that name another
// owner holds excludes its client. The works of clusters no longer decided go.
func (r *Reconciler) clientWorks(ctx context.Context, fl *flv1alpha1.FederatedLearning, o *observed, name string, paths map[string]string, desired func(cluster string) *workv1.ManifestWork) error {
	for _, c := range sortedKeys(paths) {
		w := &workv1.ManifestWork{}
		err := r.ensure(ctx, fl, "ManifestWork", desired(c), w, true)
		if isConflict(err) {
			o.Clients[c] = clientState{Excluded: true, Reason: ReasonNameConflict, Message: err.Error()}
			continue
		}
		if err != nil {
			return err
		}
		cs := o.Clients[c]
		cs.Delivered, cs.Applied = true, meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkApplied)
		o.Clients[c] = cs
	}
	return r.deleteStaleWorks(ctx, fl, o, name, paths)
}

// hubNodeIP is the InternalIP of a Ready hub node (the first by name), which OCM's controller
// gives NodePort listeners without an ip; "" when there is none.
func (r *Reconciler) hubNodeIP(ctx context.Context) (string, error) {
	l := &corev1.NodeList{}
	if err := r.Reader.List(ctx, l); err != nil {
		if apierrors.IsForbidden(err) {
			return "", nil
		}
		return "", err
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	for _, n := range l.Items {
		ready := false
		for _, c := range n.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
		}
		for _, a := range n.Status.Addresses {
			if ready && a.Type == corev1.NodeInternalIP {
				return a.Address, nil
			}
		}
	}
	return "", nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func ctrlLog(ctx context.Context) logr.Logger { return ctrl.LoggerFrom(ctx) }
