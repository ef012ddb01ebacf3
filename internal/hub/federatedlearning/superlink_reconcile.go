package federatedlearning

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
)

// ownLink is a federation's own SuperLink as the controller found or made it.
type ownLink struct {
	// Port is its node port (and the front's, the SuperLink's and the SuperNodes' port).
	Port int32
	// Material is what its Secret holds.
	Material *linkMaterial
	// Available: its Deployment has an available replica.
	Available bool
	// publicKeys are the client clusters' SuperNode public keys (PEM), by cluster.
	publicKeys map[string][]byte
}

// target is how the hub reaches l's Control API: through the front, at the SuperLink's Service,
// trusting the federation's CA, with the hub's token.
func (l *ownLink) target(fl *flv1alpha1.FederatedLearning) linkTarget {
	return linkTarget{
		Address: superLinkName(fl) + "." + fl.Namespace + ":" + strconv.Itoa(int(l.Port)),
		CAPEM:   string(l.Material.CA), Token: string(l.Material.ControlToken), Own: true,
	}
}

// ownSuperLink keeps fl's own SuperLink (superlink.go): its Service and port, its Secret with a
// SuperNode key for each client cluster (clients), its Deployment. An errConflict names an
// object of its names that is not fl's.
func (r *Reconciler) ownSuperLink(ctx context.Context, fl *flv1alpha1.FederatedLearning, clients []string) (*ownLink, error) {
	port, err := r.superLinkPort(ctx, fl)
	if err != nil {
		return nil, err
	}
	m, err := r.superLinkMaterial(ctx, fl, clients)
	if err != nil {
		return nil, err
	}
	d := &appsv1.Deployment{}
	if err := r.ensure(ctx, fl, "Deployment", superLinkDeployment(fl, r.SuperLinks, port, podSecretName(fl, m)), d, true); err != nil {
		return nil, err
	}
	l := &ownLink{Port: port, Material: m, Available: d.Status.AvailableReplicas > 0, publicKeys: map[string][]byte{}}
	for c, k := range m.Nodes {
		pub, err := nodePublicKey(k)
		if err != nil {
			return nil, fmt.Errorf("the SuperNode key of cluster %s in the hub's record %s: %w", c, recordKey(fl), err)
		}
		l.publicKeys[c] = pub
	}
	return l, nil
}

// superLinkPort is the port of fl's SuperLink Service, which it creates with the first node port
// the API server has not given to another Service.
func (r *Reconciler) superLinkPort(ctx context.Context, fl *flv1alpha1.FederatedLearning) (int32, error) {
	key := client.ObjectKey{Namespace: fl.Namespace, Name: superLinkName(fl)}
	for i := 0; i < portTries; i++ {
		s := &corev1.Service{}
		err := r.Reader.Get(ctx, key, s) // not the cache: a Service made a moment ago must be seen
		if err == nil {
			if !mine(fl, s) {
				return 0, errConflict{"Service", key.String()}
			}
			if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].NodePort == 0 {
				return 0, fmt.Errorf("the federation's SuperLink Service %s was changed: it has no node port; delete it and the hub makes it again", key)
			}
			return s.Spec.Ports[0].NodePort, nil
		}
		if !apierrors.IsNotFound(err) {
			return 0, err
		}
		desired := superLinkService(fl, candidatePort(fl, i))
		err = r.Client.Create(ctx, desired)
		switch {
		case err == nil:
			return desired.Spec.Ports[0].NodePort, nil
		case apierrors.IsAlreadyExists(err):
			// made meanwhile: the next turn reads it
		case apierrors.IsInvalid(err) && strings.Contains(err.Error(), "already allocated"):
			// another Service has the port: try the next
		default:
			return 0, fmt.Errorf("creating Service %s: %w", key, err)
		}
	}
	return 0, fmt.Errorf("creating Service %s: the %d node ports tried from %d are all allocated: free node ports, or widen the API server's --service-node-port-range", key, portTries, candidatePort(fl, 0))
}

// superLinkMaterial reads fl's keys from the hub's record (Secret federation-<uid> in
// flower-system, which only the hub reads), making it, or what is missing or stale in it: the
// certificate (for other names, or near its end, with a new CA), a SuperNode key for each client
// cluster; the keys of clusters that are no longer clients go. Then it makes sure the pods' copy
// exists in fl's namespace (podSecretName): the hub creates and deletes Secrets there, and never
// reads one.
func (r *Reconciler) superLinkMaterial(ctx context.Context, fl *flv1alpha1.FederatedLearning, clients []string) (*linkMaterial, error) {
	key := recordKey(fl)
	now := r.Clock.Now()
	s := &corev1.Secret{}
	err := r.Reader.Get(ctx, key, s) // Secrets are not cached
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	if exists && s.Labels[UIDLabel] != string(fl.UID) {
		return nil, errConflict{"Secret", key.String()}
	}
	var m *linkMaterial
	changed := !exists
	if exists {
		m = readLinkMaterial(s.Data)
		if len(m.SuperExec) == 0 || len(m.ControlToken) == 0 || m.certProblem(fl, r.SuperLinks.Host, now) != "" {
			fresh, err := newLinkMaterial(fl, r.SuperLinks.Host, now)
			if err != nil {
				return nil, err
			}
			fresh.Nodes, m, changed = m.Nodes, fresh, true
		}
	} else {
		if m, err = newLinkMaterial(fl, r.SuperLinks.Host, now); err != nil {
			return nil, err
		}
	}
	for _, c := range clients {
		if len(m.Nodes[c]) == 0 {
			k, err := newNodeKey()
			if err != nil {
				return nil, err
			}
			m.Nodes[c], changed = k, true
		}
	}
	for c := range m.Nodes {
		if !slices.Contains(clients, c) {
			delete(m.Nodes, c)
			changed = true
		}
	}
	previous := s.Annotations[annotationPodSecret]
	current := podSecretName(fl, m)
	if changed || previous != current {
		desired := recordSecret(fl, m, current)
		if exists {
			desired.ResourceVersion = s.ResourceVersion
			err = r.Client.Update(ctx, desired)
		} else {
			err = r.Client.Create(ctx, desired)
		}
		if err != nil {
			return nil, fmt.Errorf("writing Secret %s: %w", key, err)
		}
	}
	// The pods' copy: its name carries the hash of what it holds, which no one else can know, so
	// one of that name is the hub's (made before a restart) and is not read.
	if err := r.Client.Create(ctx, podSecret(fl, m)); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating Secret %s/%s: %w", fl.Namespace, current, err)
	}
	if previous != "" && previous != current {
		old := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: fl.Namespace, Name: previous}}
		if err := r.Client.Delete(ctx, old); client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("deleting the replaced Secret %s/%s: %w", fl.Namespace, previous, err)
		}
	}
	return m, nil
}

// deleteRecord deletes fl's record in flower-system (when fl goes; the pods' copy goes with fl by
// its owner reference).
func (r *Reconciler) deleteRecord(ctx context.Context, fl *flv1alpha1.FederatedLearning) error {
	s := &corev1.Secret{}
	err := r.Reader.Get(ctx, recordKey(fl), s)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || s.Labels[UIDLabel] != string(fl.UID) {
		return err
	}
	return client.IgnoreNotFound(r.Client.Delete(ctx, s, client.Preconditions{UID: &s.UID}))
}

// dropNodeKeys removes the SuperNode keys of clusters from fl's record: the next reconcile gives
// them new ones.
func (r *Reconciler) dropNodeKeys(ctx context.Context, fl *flv1alpha1.FederatedLearning, clusters []string) error {
	s := &corev1.Secret{}
	if err := r.Reader.Get(ctx, recordKey(fl), s); err != nil {
		return err
	}
	if s.Labels[UIDLabel] != string(fl.UID) {
		return errConflict{"Secret", recordKey(fl).String()}
	}
	for _, c := range clusters {
		delete(s.Data, keyNodePrefix+c)
	}
	return r.Client.Update(ctx, s)
}
