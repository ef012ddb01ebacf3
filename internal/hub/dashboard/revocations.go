package dashboard

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/contract/wellknown"
)

// Revocations holds the sessions viewers logged out of, each until it would have expired anyway.
type Revocations interface {
	// Revoked says whether session id was logged out of and has not expired since.
	Revoked(id string) bool
	// Revoke records that session id ended; the record may be forgotten after expires.
	Revoke(ctx context.Context, id string, expires time.Time) error
}

// memoryRevocations are the logouts this process saw.
type memoryRevocations struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	ids   map[string]time.Time // session id → its expiry
}

func newMemoryRevocations(clk clock.PassiveClock) *memoryRevocations {
	return &memoryRevocations{clock: clk, ids: map[string]time.Time{}}
}

func (m *memoryRevocations) Revoked(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	exp, ok := m.ids[id]
	return ok && m.clock.Now().Before(exp)
}

// Revoke records id and forgets the logouts that have expired since.
func (m *memoryRevocations) Revoke(_ context.Context, id string, expires time.Time) error {
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for old, exp := range m.ids {
		if !now.Before(exp) {
			delete(m.ids, old)
		}
	}
	m.ids[id] = expires
	return nil
}

// LogoutsConfigMap is the ConfigMap, in the hub's namespace, where every replica of the hub
// records and reads the dashboard sessions viewers logged out of: data maps a session id (random,
// and no credential: a cookie opens only with the session key) to the Unix second it expires.
const LogoutsConfigMap = "flotilla-dashboard-logouts"

// maxLogouts bounds the logouts held at once (those of the last SessionMaxAge): about 50 bytes
// each, well inside a ConfigMap's 1 MiB.
const maxLogouts = 10000

// ConfigMapRevocations are the logouts of every replica of the hub, in LogoutsConfigMap: a
// replica reads them from a watch, so a cookie logged out on one replica is refused by the
// others as soon as the watch delivers the change (milliseconds), and a replica that restarts
// still knows them. Start it before Revoked answers.
type ConfigMapRevocations struct {
	client    kubernetes.Interface
	namespace string
	clock     clock.PassiveClock
	informer  cache.SharedIndexInformer
}

// NewConfigMapRevocations keeps the logouts in LogoutsConfigMap in namespace through client (as
// the hub: the chart's Role lets it read and write ConfigMaps in its namespace).
func NewConfigMapRevocations(client kubernetes.Interface, namespace string, clk clock.PassiveClock) *ConfigMapRevocations {
	byName := fields.OneTermEqualSelector("metadata.name", LogoutsConfigMap).String()
	lw := cache.NewFilteredListWatchFromClient(client.CoreV1().RESTClient(), "configmaps", namespace,
		func(o *metav1.ListOptions) { o.FieldSelector = byName })
	return &ConfigMapRevocations{client: client, namespace: namespace, clock: clk,
		informer: cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})}
}

// Start watches the ConfigMap until ctx ends, and returns once the watch has listed it, so that
// Revoked knows every logout so far. It fails at once, naming the fix, when the hub may not
// read ConfigMaps in namespace.
func (c *ConfigMapRevocations) Start(ctx context.Context) error {
	_, err := c.client.CoreV1().ConfigMaps(c.namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", LogoutsConfigMap).String()})
	if err != nil {
		return fmt.Errorf("reading ConfigMap %s/%s, where the dashboard's logouts are kept: %w; the hub needs get, list, watch, create and update on ConfigMaps in its namespace (--leader-election-namespace; the chart's Role gives them)",
			c.namespace, LogoutsConfigMap, err)
	}
	go c.informer.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.informer.HasSynced) {
		return ctx.Err()
	}
	return nil
}

// Revoked reads the watched ConfigMap. One the hub did not make (without its part-of label) holds
// no logouts: Revoke refuses to write there, so nothing was recorded in it.
func (c *ConfigMapRevocations) Revoked(id string) bool {
	obj, ok, err := c.informer.GetStore().GetByKey(c.namespace + "/" + LogoutsConfigMap)
	if err != nil || !ok {
		return false
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok || !hubMade(cm) {
		return false
	}
	exp, err := strconv.ParseInt(cm.Data[id], 10, 64)
	return err == nil && c.clock.Now().Before(time.Unix(exp, 0))
}

// Revoke writes id into the ConfigMap, read from the API server (not the watch) and written with
// its resourceVersion, so that two replicas' logouts at once are both kept; it makes the
// ConfigMap when there is none.
func (c *ConfigMapRevocations) Revoke(ctx context.Context, id string, expires time.Time) error {
	cms := c.client.CoreV1().ConfigMaps(c.namespace)
	retriable := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	return retry.OnError(retry.DefaultRetry, retriable, func() error {
		cm, err := cms.Get(ctx, LogoutsConfigMap, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			data, err := logoutsAfter(nil, c.clock.Now(), id, expires)
			if err != nil {
				return err
			}
			_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: LogoutsConfigMap, Namespace: c.namespace,
				Labels: map[string]string{wellknown.PartOfLabel: wellknown.PartOf}}, Data: data}, metav1.CreateOptions{})
			return err
		case err != nil:
			return err
		case !hubMade(cm):
			return fmt.Errorf("ConfigMap %s/%s is not the hub's (it has no label %s=%s), and the hub records dashboard logouts under that name: rename or delete it",
				c.namespace, LogoutsConfigMap, wellknown.PartOfLabel, wellknown.PartOf)
		}
		data, err := logoutsAfter(cm.Data, c.clock.Now(), id, expires)
		if err != nil {
			return fmt.Errorf("ConfigMap %s/%s: %w", c.namespace, LogoutsConfigMap, err)
		}
		cm.Data = data
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})
}

// hubMade says whether the hub made cm.
func hubMade(cm *corev1.ConfigMap) bool { return cm.Labels[wellknown.PartOfLabel] == wellknown.PartOf }

// errTooManyLogouts is a logout that would hold more than maxLogouts.
var errTooManyLogouts = fmt.Errorf("it already holds %d logouts that have not expired (sessions last at most %s), as many as it takes: the logout is refused on every replica but this one", maxLogouts, SessionMaxAge)

// logoutsAfter is the ConfigMap's data once id, expiring at expires, is added at now: entries
// that have expired (or that are not a Unix second) are dropped.
func logoutsAfter(data map[string]string, now time.Time, id string, expires time.Time) (map[string]string, error) {
	next := maps.Clone(data)
	if next == nil {
		next = map[string]string{}
	}
	for old, v := range next {
		exp, err := strconv.ParseInt(v, 10, 64)
		if err != nil || !now.Before(time.Unix(exp, 0)) {
			delete(next, old)
		}
	}
	if _, ok := next[id]; !ok && len(next) >= maxLogouts {
		return nil, errTooManyLogouts
	}
	next[id] = strconv.FormatInt(expires.Unix(), 10)
	return next, nil
}
