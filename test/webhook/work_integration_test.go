//go:build integration

package webhook

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/hub"
	"github.com/flotilla/flotilla/internal/hub/webhook"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// editWorks lets a user write ManifestWorks, but grants no execute-as.
var editWorks = rbacv1.PolicyRule{
	APIGroups: []string{webhook.WorkGroup}, Resources: []string{"manifestworks"},
	Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"},
}

// executeAs is the permission OCM asks for a work whose executor is service account ns/name.
func executeAs(ns, name string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{
		APIGroups: []string{webhook.WorkGroup}, Resources: []string{"manifestworks"}, Verbs: []string{"execute-as"},
		ResourceNames: []string{fmt.Sprintf("system:serviceaccount:%s:%s", ns, name)},
	}
}

// grantIn gives user the rules in namespace ns until the test ends.
func grantIn(t *testing.T, env *testenv.Env, ns, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	rbac := env.Hub.Client.RbacV1()
	name := "wh-test-" + user
	_, err := rbac.Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// A further grant to the same user in the namespace: a role of its own.
		grants.Lock()
		grants.n++
		name = fmt.Sprintf("wh-test-%s-%d", user, grants.n)
		grants.Unlock()
		_, err = rbac.Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	b := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if _, err := rbac.RoleBindings(ns).Create(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func namespaceAtEnd(t *testing.T, env *testenv.Env, name string) {
	t.Helper()
	ctx := context.Background()
	if _, err := env.Hub.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Hub.Client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

func work(ns, name string, manifests ...string) *workv1.ManifestWork {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	for _, m := range manifests {
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(m)}})
	}
	return w
}

func withExecutor(w *workv1.ManifestWork, ns, name string) *workv1.ManifestWork {
	w.Spec.Executor = &workv1.ManifestWorkExecutor{Subject: &workv1.ManifestWorkExecutorSubject{
		Type: workv1.ExecutorSubjectTypeServiceAccount, ServiceAccount: &workv1.ManifestWorkSubjectServiceAccount{Namespace: ns, Name: name},
	}}
	return w
}

const (
	workDeploy = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ml"},"spec":{"replicas":1}}`
	workJob    = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"train","namespace":"ml"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`
)

// TestManifestWorkValidation: the API server sends ManifestWork writes to the hub's webhook,
// which refuses what OCM's refuses (and duplicates and stray manifestConfigs), each refusal
// naming the manifest, the reason and the fix, and lets good works through.
func TestManifestWorkValidation(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	startHub(t, env)
	ctx := context.Background()
	const ns, user = "wh-work-east", "wh-work-user"
	namespaceAtEnd(t, env, ns)
	grantIn(t, env, ns, user, editWorks)
	c := as(t, env, user)

	good := work(ns, "good", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml"}}`, workDeploy, workJob)
	good.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
		ResourceIdentifier: workv1.ResourceIdentifier{Group: "batch", Resource: "jobs", Namespace: "ml", Name: "train"},
		FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
	}}
	eventually(t, "the user to create a valid work", func(ctx context.Context) error { return c.Create(ctx, good.DeepCopy()) })

	subject := func(name string) string { return fmt.Sprintf("manifestworks %q in namespace %q: ", name, ns) }
	big := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big%d","namespace":"ml"},"data":{"k":"` + strings.Repeat("x", 300*1024) + `"}}`
	stray := work(ns, "stray", workDeploy)
	stray.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: "ml", Name: "api"}}}
	cases := map[string]struct {
		w    *workv1.ManifestWork
		want string
	}{
		"empty": {work(ns, "empty"), subject("empty") + "spec.workload.manifests is empty"},
		"no name": {work(ns, "noname", workDeploy, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ml"}}`),
			subject("noname") + "spec.workload.manifests[1] (ConfigMap ?) has no metadata.name: the agent needs them to find and apply the object; set metadata.name"},
		"duplicate": {work(ns, "dup", workDeploy, workJob, workDeploy),
			subject("dup") + "spec.workload.manifests[2] (Deployment ml/web) is the same object as manifests[0]"},
		"too large": {work(ns, "big", fmt.Sprintf(big, 1), fmt.Sprintf(big, 2)),
			subject("big") + "spec.workload.manifests hold 614"},
		"stray config": {stray,
			subject("stray") + `spec.manifestConfigs[0].resourceIdentifier (group "apps", resource "deployments", namespace "ml", name "api") names no manifest of the work`},
		"executor without execute-as": {withExecutor(work(ns, "exec", workJob), "ml", "runner"),
			subject("exec") + `spec.executor (service account ml/runner) needs permission to execute-as manifestworks on "system:serviceaccount:ml:runner" in namespace "wh-work-east"`},
	}
	for name, tc := range cases {
		denied(t, name, c.Create(ctx, tc.w), tc.want)
	}
	// Editing a good work into a bad one is refused too.
	got := good.DeepCopy()
	denied(t, "update to a duplicate", update(ctx, c, got, func() {
		got.Spec.Workload.Manifests = append(got.Spec.Workload.Manifests, got.Spec.Workload.Manifests[1])
	}), subject("good")+"spec.workload.manifests[3] (Deployment ml/web) is the same object as manifests[1]")
}

// TestManifestWorkExecutor: a work with an executor needs execute-as on the executor in the
// work's namespace (OCM's SubjectAccessReview); a grant in another namespace does not count;
// once the executor is set, other users may edit the work without the permission, as in OCM.
func TestManifestWorkExecutor(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	startHub(t, env)
	ctx := context.Background()
	const ns, other, user, editor = "wh-exec-east", "wh-exec-west", "wh-exec-user", "wh-exec-editor"
	namespaceAtEnd(t, env, ns)
	namespaceAtEnd(t, env, other)
	grantIn(t, env, ns, user, editWorks)
	grantIn(t, env, other, user, editWorks, executeAs("ml", "runner"))
	c := as(t, env, user)

	w := withExecutor(work(ns, "exec", workJob), "ml", "runner")
	want := fmt.Sprintf(`manifestworks "exec" in namespace %q: spec.executor (service account ml/runner) needs permission to execute-as `+
		`manifestworks on "system:serviceaccount:ml:runner" in namespace %q in group work.open-cluster-management.io`, ns, ns)
	eventually(t, "the user's grants to reach the authorizer", func(ctx context.Context) error {
		return c.Create(ctx, withExecutor(work(other, "exec", workJob), "ml", "runner"))
	})
	denied(t, "execute-as granted only in another namespace", c.Create(ctx, w.DeepCopy()), want)

	grantIn(t, env, ns, user+"-exec", executeAs("ml", "runner"))
	grantIn(t, env, ns, editor, editWorks)
	// The grant above is for another user: still refused.
	denied(t, "execute-as granted to someone else", c.Create(ctx, w.DeepCopy()), want)
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "wh-exec-user-runner"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "wh-test-" + user + "-exec"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if _, err := env.Hub.Client.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the user to create the work once granted execute-as in its namespace", func(ctx context.Context) error { return c.Create(ctx, w.DeepCopy()) })

	// An editor without execute-as may change the manifests while the executor stays, but not
	// the executor.
	e := as(t, env, editor)
	got := w.DeepCopy()
	eventually(t, "the editor to change the manifests", func(ctx context.Context) error {
		return update(ctx, e, got, func() {
			got.Spec.Workload.Manifests = append(got.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(workDeploy)}})
		})
	})
	denied(t, "the editor changing the executor", update(ctx, e, got, func() { got.Spec.Executor.Subject.ServiceAccount.Name = "root" }),
		`spec.executor (service account ml/root) needs permission to execute-as manifestworks on "system:serviceaccount:ml:root"`)
}

// TestManifestWorkWritesWithoutHub: while no hub answers (the configuration stays, failure
// policy Fail), a change of a work's spec is refused, but what agents write (labels and
// finalizers, and status, a subresource) still goes through: the API server calls the webhook
// only for creates and updates that change spec.
func TestManifestWorkWritesWithoutHub(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	deleteConfigurationAtEnd(t, env)
	opts := hub.DefaultOptions()
	opts.LeaderElection, opts.HealthProbeAddress, opts.MetricsAddress = false, "0", "0"
	opts.SkipNameValidation = true
	opts.WebhookAddress = "127.0.0.1:0"
	r := startReplica(t, env.HubIdentity(t, ""), opts)
	waitForWebhook(t, env)
	ctx := context.Background()
	const ns = "wh-nohub-east"
	namespaceAtEnd(t, env, ns)
	c := admin(t, env)
	w := work(ns, "w", workJob)
	eventually(t, "creating the work", func(ctx context.Context) error { return c.Create(ctx, w.DeepCopy()) })
	denied(t, "a bad work while the hub runs", c.Create(ctx, work(ns, "bad")), "spec.workload.manifests is empty")

	r.stop()
	testenv.WaitFor(t, wait, "the webhook to stop answering", func(ctx context.Context) (bool, string, error) {
		err := c.Create(ctx, work(ns, "probe", workJob), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "failed calling webhook"), fmt.Sprintf("dry-run create: %v", err), nil
	})
	if err := update(ctx, c, w, func() {
		w.Finalizers = append(w.Finalizers, "cluster.open-cluster-management.io/manifest-work-cleanup")
		w.Labels = map[string]string{"agent": "was-here"}
	}); err != nil {
		t.Errorf("adding a finalizer and a label without a hub: %v", err)
	}
	w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "AppliedManifestWorkComplete", Message: "ok", LastTransitionTime: metav1.Now()}}
	if err := c.Status().Update(ctx, w); err != nil {
		t.Errorf("writing status without a hub: %v", err)
	}
	if err := update(ctx, c, w, func() { w.Finalizers = nil }); err != nil {
		t.Errorf("removing the finalizer without a hub: %v", err)
	}
	err := update(ctx, c, w, func() {
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(workDeploy)}})
	})
	if err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Errorf("changing spec without a hub: %v, want the API server's failure to call the webhook", err)
	}
}
