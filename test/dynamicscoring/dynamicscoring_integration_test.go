//go:build integration

package dynamicscoring

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	dsv1alpha1 "github.com/flotilla/flotilla/api/dynamicscoring/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/addon"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/agent/builtin/dynamicscoring"
	"github.com/flotilla/flotilla/internal/contract/scoringwire"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{Spokes: 2, CRDs: true})) }

const wait = 60 * time.Second

// getScore reads AddOnPlacementScore ns/name, nil when there is none.
func getScore(ctx context.Context, c client.Client, ns, name string) (*clusterv1alpha1.AddOnPlacementScore, error) {
	s := &clusterv1alpha1.AddOnPlacementScore{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return s, err
}

// waitScore waits until AddOnPlacementScore ns/name satisfies ok.
func waitScore(t *testing.T, c client.Client, ns, name, what string, ok func(*clusterv1alpha1.AddOnPlacementScore) bool) *clusterv1alpha1.AddOnPlacementScore {
	t.Helper()
	var got *clusterv1alpha1.AddOnPlacementScore
	testenv.WaitFor(t, wait, what, func(ctx context.Context) (bool, string, error) {
		var err error
		if got, err = getScore(ctx, c, ns, name); err != nil || got == nil {
			return false, "no AddOnPlacementScore", err
		}
		return ok(got), fmt.Sprintf("%+v", got.Status), nil
	})
	return got
}

func value(s *clusterv1alpha1.AddOnPlacementScore, name string) (int32, bool) {
	for _, v := range s.Status.Scores {
		if v.Name == name {
			return v.Value, true
		}
	}
	return 0, false
}

func scored(s *clusterv1alpha1.AddOnPlacementScore) *metav1.Condition {
	return meta.FindStatusCondition(s.Status.Conditions, dynamicscoring.ConditionScored)
}

// failedWith says whether the Scored condition is False with reason and a message containing
// every part.
func failedWith(reason string, parts ...string) func(*clusterv1alpha1.AddOnPlacementScore) bool {
	return func(s *clusterv1alpha1.AddOnPlacementScore) bool {
		c := scored(s)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != reason {
			return false
		}
		for _, p := range parts {
			if !strings.Contains(c.Message, p) {
				return false
			}
		}
		return true
	}
}

func promScorer(ns, name, configURL, scoreName, query, host string) *dsv1alpha1.DynamicScorer {
	return &dsv1alpha1.DynamicScorer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: dsv1alpha1.DynamicScorerSpec{
		Description: name, ConfigURL: configURL, ConfigSyncMode: dsv1alpha1.ConfigSyncModeNone,
		Source: &dsv1alpha1.SourceSpec{Type: dsv1alpha1.SourceTypePrometheus, Host: host, Path: "/api/v1/query_range",
			Params: &dsv1alpha1.SourceParams{Query: query, Range: 2, Step: 1}},
		Scoring:          &dsv1alpha1.ScoringSpec{Path: "/scoring", Params: &dsv1alpha1.ScoringParams{Name: scoreName, Interval: 1}},
		ScoreDestination: dsv1alpha1.ScoreDestinationAddOnPlacementScore,
	}}
}

func TestDynamicScoring(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2, CRDs: true})
	// The hub accepts DynamicScorers from this namespace only.
	ns := env.Namespace(t, env.Hub)
	opts := testenv.TestHubOptions()
	opts.DynamicScoringNamespace = ns
	env.StartHub(t, opts)
	joined := env.JoinSpokes(t)
	one, two := joined[0], joined[1]
	hub := env.HubClient(t)
	ctx := context.Background()

	// Each spoke has its Prometheus scraping its exporter: spoke-1's GPUs are 10% busy, spoke-2's 60%.
	exporters := map[string]*exporter{one.Name: newExporter(t, 10), two.Name: newExporter(t, 60)}
	for _, j := range joined {
		prom := testenv.StartPrometheus(t, exporters[j.Name].target())
		ad, err := addon.New(addon.Options{
			ClusterName: j.Name, AgentID: "agent-" + j.Name, Hub: j.Agent.Hub(), Spoke: j.Spoke.RESTConfig(),
			BuiltIns: builtin.NewManager(j.Name, j.Spoke.RESTConfig(), clock.RealClock{}, testr.New(t).WithName("builtin-"+j.Name),
				dynamicscoring.AddOn{Sweep: 300 * time.Millisecond, Timeout: time.Second, AllowLocal: true,
					Transport: transportTo(strings.TrimPrefix(prom.URL, "http://"))}),
			InitialBackoff: 200 * time.Millisecond, MaxBackoff: 2 * time.Second,
			Log: testr.New(t).WithName("addon-" + j.Name),
		})
		if err != nil {
			t.Fatal(err)
		}
		testenv.RunUntilCleanup(t, ad.Run)
		if err := hub.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: j.Name, Name: dynamicscoring.Name}}); err != nil {
			t.Fatal(err)
		}
	}
	sc := newScorer(t)

	t.Run("a scorer synced from /config scores each cluster from its Prometheus", func(t *testing.T) {
		gpu := promScorer(ns, "gpu", sc.srv.URL+"/config", "", "", "")
		gpu.Spec.ConfigSyncMode, gpu.Spec.Source, gpu.Spec.Scoring = dsv1alpha1.ConfigSyncModeFull, nil, nil
		// Created, not testenv.Create: it scores on through the next subtests.
		if err := hub.Create(ctx, gpu); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, wait, "DynamicScorer gpu Active with its /config synced", func(ctx context.Context) (bool, string, error) {
			s := &dsv1alpha1.DynamicScorer{}
			if err := hub.Get(ctx, client.ObjectKeyFromObject(gpu), s); err != nil {
				return false, "", err
			}
			return s.Status.HealthStatus == dsv1alpha1.ScorerHealthActive && s.Status.LastSyncedConfig != nil &&
				s.Status.LastSyncedConfig.Scoring.Params.Name == "gpu-util", fmt.Sprintf("%+v", s.Status), nil
		})
		// 100 - 2 x 10 and 100 - 2 x 60.
		for cluster, want := range map[string]int32{one.Name: 80, two.Name: -20} {
			s := waitScore(t, hub, cluster, "gpu-util", "the score gpu-util of "+cluster, func(s *clusterv1alpha1.AddOnPlacementScore) bool {
				v, ok := value(s, "gpu-util")
				return ok && v == want && scored(s) != nil && scored(s).Status == metav1.ConditionTrue
			})
			if s.Status.ValidUntil == nil || s.Labels["addon.flotilla.io/built-in"] != dynamicscoring.Name {
				t.Errorf("%s: validUntil %v, labels %v: want both set", cluster, s.Status.ValidUntil, s.Labels)
			}
		}
	})

	t.Run("a scorer in another namespace is refused and takes no score name", func(t *testing.T) {
		other := env.Namespace(t, env.Hub)
		// The score name of ns's "gpu": before the hub took scorers from one namespace only, the
		// agents ran it too, and whichever sorted first took the name.
		intruder := promScorer(other, "a-gpu", sc.srv.URL+"/config", "gpu-util", "avg(DCGM_FI_DEV_GPU_UTIL)", "http://"+promHost)
		testenv.Create(t, hub, intruder)
		testenv.WaitFor(t, wait, "DynamicScorer "+other+"/a-gpu not Accepted", func(ctx context.Context) (bool, string, error) {
			s := &dsv1alpha1.DynamicScorer{}
			if err := hub.Get(ctx, client.ObjectKeyFromObject(intruder), s); err != nil {
				return false, "", err
			}
			c := meta.FindStatusCondition(s.Status.Conditions, dsv1alpha1.ConditionAccepted)
			return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "metadata.namespace") &&
					strings.Contains(c.Message, "--dynamic-scoring-namespace") && s.Status.HealthStatus == dsv1alpha1.ScorerHealthInactive,
				fmt.Sprintf("%+v", s.Status), nil
		})
		// The agents' lists name only ns's scorers, and the administrator's scores go on.
		for _, j := range joined {
			cm := &corev1.ConfigMap{}
			if err := hub.Get(ctx, client.ObjectKey{Namespace: j.Name, Name: scoringwire.ConfigMapName}, cm); err != nil {
				t.Fatal(err)
			}
			sums, err := scoringwire.DecodeSummaries(cm.Data)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range sums {
				if s.Namespace != ns {
					t.Errorf("%s's agent runs %s, outside the hub's namespace %s", j.Name, s.ScorerRef(), ns)
				}
			}
		}
		waitScore(t, hub, one.Name, "gpu-util", "the administrator's gpu-util on "+one.Name, func(s *clusterv1alpha1.AddOnPlacementScore) bool {
			v, ok := value(s, "gpu-util")
			return ok && v == 80
		})
	})

	t.Run("a placement ranks clusters by the dynamic score and follows it", func(t *testing.T) {
		set := "dynamic-scoring"
		testenv.Create(t, hub, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set},
			Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}}})
		for _, j := range joined {
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: j.Name}}
			testenv.Update(t, hub, mc, func() {
				if mc.Labels == nil {
					mc.Labels = map[string]string{}
				}
				mc.Labels[clusterv1beta2.ClusterSetLabel] = set
			})
		}
		testenv.Create(t, hub, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: set, Namespace: ns},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}})
		p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gpu-idle"}, Spec: clusterv1beta1.PlacementSpec{
			NumberOfClusters: ptr.To[int32](1), ClusterSets: []string{set},
			PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact,
				Configurations: []clusterv1beta1.PrioritizerConfig{{Weight: ptr.To[int32](1), ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{
					Type: clusterv1beta1.ScoreCoordinateTypeAddOn, AddOn: &clusterv1beta1.AddOnScore{ResourceName: "gpu-util", ScoreName: "gpu-util"}}}}},
		}}
		testenv.Create(t, hub, p)
		waitDecision(t, hub, ns, p.Name, one.Name)
		// spoke-1's GPUs fill up: 100 - 2 x 90 = -80, below spoke-2's -20.
		exporters[one.Name].util.Store(90)
		waitDecision(t, hub, ns, p.Name, two.Name)
	})

	t.Run("a misbehaving scorer gets a clear status and its old scores expire", func(t *testing.T) {
		flaky := promScorer(ns, "flaky", sc.srv.URL+"/config", "flaky", "", "")
		flaky.Spec.Source = &dsv1alpha1.SourceSpec{Type: dsv1alpha1.SourceTypeNone}
		flaky.Spec.Scoring.Path = "/flaky"
		testenv.Create(t, hub, flaky)
		first := waitScore(t, hub, one.Name, "flaky", "the score 42 of flaky", func(s *clusterv1alpha1.AddOnPlacementScore) bool {
			v, ok := value(s, "flaky")
			return ok && v == 42
		})
		ref := "DynamicScorer " + ns + "/flaky"
		for mode, reason := range map[string]string{
			"malformed":    dynamicscoring.ReasonScorerMalformed,
			"out-of-range": dynamicscoring.ReasonScoreOutOfRange,
			"slow":         dynamicscoring.ReasonScorerTimeout,
		} {
			sc.set(mode)
			s := waitScore(t, hub, one.Name, "flaky", "Scored False "+reason, failedWith(reason, ref, "spec.scoring.host"))
			if mode == "malformed" || mode == "out-of-range" {
				if c := scored(s); !strings.Contains(c.Message, "fix the scorer") {
					t.Errorf("%s: message %q does not say to fix the scorer", mode, c.Message)
				}
			}
			if v, _ := value(s, "flaky"); v != 42 {
				t.Errorf("%s: score %d, want the old 42 left to expire", mode, v)
			}
		}
		s, err := getScore(ctx, hub, one.Name, "flaky")
		if err != nil || s == nil {
			t.Fatal(err)
		}
		if !s.Status.ValidUntil.Before(&metav1.Time{Time: time.Now()}) {
			t.Errorf("validUntil %v of the old scores has not passed (first written with %v): they were refreshed", s.Status.ValidUntil, first.Status.ValidUntil)
		}
		sc.set("ok")
	})

	t.Run("a scorer that needs a token gets it from a Secret on the spoke, and says when it is missing", func(t *testing.T) {
		secure := promScorer(ns, "secure", sc.srv.URL+"/config", "secure", "", "")
		secure.Spec.Source = &dsv1alpha1.SourceSpec{Type: dsv1alpha1.SourceTypeNone}
		secure.Spec.Scoring.Path = "/secure"
		secure.Spec.Scoring.Auth = &dsv1alpha1.Auth{TokenSecretRef: dsv1alpha1.SecretKeyReference{Name: "scorer-token", Key: "token"}}
		testenv.Create(t, hub, secure)
		ref := "DynamicScorer " + ns + "/secure"
		waitScore(t, hub, one.Name, "secure", "Scored False: the token's Secret is missing",
			failedWith(dynamicscoring.ReasonAuthSecretMissing, ref, "spec.scoring.auth.tokenSecretRef", "scorer-token"))
		if _, err := one.Spoke.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: addon.DefaultInstallNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: addon.DefaultInstallNamespace, Name: "scorer-token"},
			Data: map[string][]byte{"token": []byte("wrong")}}
		if _, err := one.Spoke.Client.CoreV1().Secrets(secret.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = one.Spoke.Client.CoreV1().Secrets(secret.Namespace).Delete(context.Background(), secret.Name, metav1.DeleteOptions{})
		})
		// A token the scorer refuses is the scorer's answer, not a score.
		waitScore(t, hub, one.Name, "secure", "Scored False: the scorer refuses the wrong token", func(s *clusterv1alpha1.AddOnPlacementScore) bool {
			c := scored(s)
			return c != nil && c.Status == metav1.ConditionFalse && c.Reason == dynamicscoring.ReasonScorerFailed &&
				strings.Contains(c.Message, "HTTP 401") && strings.Contains(c.Message, "spec.scoring.auth.tokenSecretRef")
		})
		secret.Data["token"] = []byte("s3cret\n") // as `kubectl create secret --from-file` leaves it
		if _, err := one.Spoke.Client.CoreV1().Secrets(secret.Namespace).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitScore(t, hub, one.Name, "secure", "the score 77, with the token", func(s *clusterv1alpha1.AddOnPlacementScore) bool {
			v, ok := value(s, "secure")
			c := scored(s)
			return ok && v == 77 && c != nil && c.Status == metav1.ConditionTrue
		})
	})

	t.Run("bad input: an unreachable source and a bad query", func(t *testing.T) {
		testenv.Create(t, hub, promScorer(ns, "unreachable", sc.srv.URL+"/config", "unreachable", "avg(DCGM_FI_DEV_GPU_UTIL)", "http://127.0.0.1:1"))
		testenv.Create(t, hub, promScorer(ns, "bad-query", sc.srv.URL+"/config", "bad-query", "avg(DCGM_FI_DEV_GPU_UTIL", "http://"+promHost))
		waitScore(t, hub, one.Name, "unreachable", "Scored False SourceUnreachable",
			failedWith(dynamicscoring.ReasonSourceUnreachable, "DynamicScorer "+ns+"/unreachable", "spec.source.host"))
		waitScore(t, hub, two.Name, "bad-query", "Scored False SourceQueryFailed",
			failedWith(dynamicscoring.ReasonSourceQueryFailed, "DynamicScorer "+ns+"/bad-query", "spec.source.params.query", "bad_data"))
	})

	t.Run("a scorer that goes down is Inactive, and its scores expire and go", func(t *testing.T) {
		down := newScorer(t)
		s := promScorer(ns, "down", down.srv.URL+"/config", "down", "", "")
		s.Spec.Source = &dsv1alpha1.SourceSpec{Type: dsv1alpha1.SourceTypeNone}
		s.Spec.Scoring.Path = "/flaky"
		testenv.Create(t, hub, s)
		waitScore(t, hub, two.Name, "down", "the score of the scorer before it goes down", func(s *clusterv1alpha1.AddOnPlacementScore) bool {
			_, ok := value(s, "down")
			return ok
		})
		down.srv.Close()
		testenv.WaitFor(t, wait, "DynamicScorer down Inactive, with an event naming spec.configURL", func(ctx context.Context) (bool, string, error) {
			got := &dsv1alpha1.DynamicScorer{}
			if err := hub.Get(ctx, client.ObjectKeyFromObject(s), got); err != nil {
				return false, "", err
			}
			evs := &eventsv1.EventList{}
			if err := hub.List(ctx, evs, client.InNamespace(ns)); err != nil {
				return false, "", err
			}
			found := false
			for _, e := range evs.Items {
				if e.Regarding.Name == "down" && e.Reason == "ScorerUnhealthy" && strings.Contains(e.Note, "spec.configURL") {
					found = true
				}
			}
			return got.Status.HealthStatus == dsv1alpha1.ScorerHealthInactive && found, fmt.Sprintf("health %q, event found %v", got.Status.HealthStatus, found), nil
		})
		testenv.WaitFor(t, wait, "the scores of the down scorer deleted once expired", func(ctx context.Context) (bool, string, error) {
			got, err := getScore(ctx, hub, two.Name, "down")
			if got != nil {
				return false, fmt.Sprintf("%+v", got.Status), err
			}
			return err == nil, "", err
		})
	})

	t.Run("the agent's identity reads its own list only, and writes scores in its own namespace only", func(t *testing.T) {
		agent := one.Agent.Hub().Current().Client
		err := agent.Get(ctx, client.ObjectKey{Namespace: two.Name, Name: scoringwire.ConfigMapName}, &corev1.ConfigMap{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s's agent reading %s's ConfigMap %s: %v, want Forbidden", one.Name, two.Name, scoringwire.ConfigMapName, err)
		}
		other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: "not-for-agents"}}
		testenv.Create(t, hub, other)
		if err := agent.Get(ctx, client.ObjectKeyFromObject(other), &corev1.ConfigMap{}); !apierrors.IsForbidden(err) {
			t.Errorf("%s's agent reading ConfigMap %s/not-for-agents: %v, want Forbidden", one.Name, one.Name, err)
		}
		// It may list and watch its one ConfigMap by name (how it watches it), and nothing more.
		kube := one.Agent.Hub().Current().Kube
		byName := metav1.ListOptions{FieldSelector: "metadata.name=" + scoringwire.ConfigMapName}
		if _, err := kube.CoreV1().ConfigMaps(one.Name).List(ctx, byName); err != nil {
			t.Errorf("%s's agent listing its ConfigMap by name: %v, want it allowed", one.Name, err)
		}
		if _, err := kube.CoreV1().ConfigMaps(one.Name).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("%s's agent listing every ConfigMap of %s: %v, want Forbidden", one.Name, one.Name, err)
		}
		if w, err := kube.CoreV1().ConfigMaps(two.Name).Watch(ctx, byName); !apierrors.IsForbidden(err) {
			if w != nil {
				w.Stop()
			}
			t.Errorf("%s's agent watching %s's ConfigMap: %v, want Forbidden", one.Name, two.Name, err)
		}
		aps := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: two.Name, Name: "gpu-util-forged"}}
		if err := agent.Create(ctx, aps); !apierrors.IsForbidden(err) {
			t.Errorf("%s's agent creating an AddOnPlacementScore in %s: %v, want Forbidden", one.Name, two.Name, err)
		}
	})

	t.Run("disabled: the hub deletes the cluster's list and the add-on its scores", func(t *testing.T) {
		if err := hub.Delete(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: two.Name, Name: dynamicscoring.Name}}); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, wait, "no ConfigMap and no scores of the add-on in "+two.Name, func(ctx context.Context) (bool, string, error) {
			err := hub.Get(ctx, client.ObjectKey{Namespace: two.Name, Name: scoringwire.ConfigMapName}, &corev1.ConfigMap{})
			if client.IgnoreNotFound(err) != nil {
				return false, "", err
			}
			l := &clusterv1alpha1.AddOnPlacementScoreList{}
			if err := hub.List(ctx, l, client.InNamespace(two.Name), client.MatchingLabels{dynamicscoring.Label: dynamicscoring.Name}); err != nil {
				return false, "", err
			}
			return apierrors.IsNotFound(err) && len(l.Items) == 0, fmt.Sprintf("ConfigMap: %v, %d scores", err, len(l.Items)), nil
		})
		if s, err := getScore(ctx, hub, one.Name, "gpu-util"); err != nil || s == nil {
			t.Errorf("%s's score gpu-util: %v (%v), want it kept", one.Name, s, err)
		}
	})

	t.Run("a ConfigMap of that name someone else made is left alone, and the hub says so", func(t *testing.T) {
		theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: two.Name, Name: scoringwire.ConfigMapName},
			Data: map[string]string{"mine": "yes"}}
		testenv.Create(t, hub, theirs)
		testenv.Create(t, hub, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: two.Name, Name: dynamicscoring.Name}})
		testenv.WaitFor(t, wait, "a ConfigMapNotOwned event in "+two.Name, func(ctx context.Context) (bool, string, error) {
			l := &corev1.EventList{}
			if err := hub.List(ctx, l, client.InNamespace(two.Name)); err != nil {
				return false, "", err
			}
			for _, e := range l.Items {
				if e.Reason == "ConfigMapNotOwned" {
					return true, e.Message, nil
				}
			}
			return false, fmt.Sprintf("%d events", len(l.Items)), nil
		})
		got := &corev1.ConfigMap{}
		if err := hub.Get(ctx, client.ObjectKeyFromObject(theirs), got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(theirs.Data, got.Data); diff != "" || len(got.Labels) != 0 {
			t.Errorf("their ConfigMap changed: labels %v, data (-want +got):\n%s", got.Labels, diff)
		}
	})
}

// waitDecision waits until placement ns/name decides for cluster alone.
func waitDecision(t *testing.T, c client.Client, ns, name, cluster string) {
	t.Helper()
	testenv.WaitFor(t, wait, fmt.Sprintf("placement %s/%s to pick %s", ns, name, cluster), func(ctx context.Context) (bool, string, error) {
		l := &clusterv1beta1.PlacementDecisionList{}
		if err := c.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: name}); err != nil {
			return false, "", err
		}
		var got []string
		for _, d := range l.Items {
			for _, dd := range d.Status.Decisions {
				got = append(got, dd.ClusterName)
			}
		}
		return len(got) == 1 && got[0] == cluster, fmt.Sprintf("decisions %v", got), nil
	})
}
