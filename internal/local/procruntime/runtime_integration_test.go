//go:build integration

package procruntime_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/procruntime"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// shellImage is the image the tests' pods name; the runtime runs /bin/sh for it.
const shellImage = "example.com/flotilla-test/shell:v1"

// probeScript prints what the container was given as key=value lines (args: sh -c gives the
// first argument after the script as $0), asks the API server who it
// is with the kubeconfig the runtime set, tries to list Secrets in another namespace and to list
// ConfigMaps in its own (which its Role allows), then exits with 3.
const probeScript = `
echo "password=$PASSWORD"
echo "level=$LEVEL"
echo "pod=$POD_NAME"
echo "args=$0"
echo "settings=$(cd "$SETTINGS_DIR" && ls | tr '\n' ' ')"
echo "serviceaccount=$(cd "$SA_DIR" && ls | tr '\n' ' ')"
echo "namespace=$(cat "$SA_DIR/namespace")"
echo "whoami=$("$KUBECTL" auth whoami -o jsonpath='{.status.userInfo.username}')"
"$KUBECTL" get configmaps settings -o name > own.out 2>&1
echo "own=$? $(cat own.out)"
"$KUBECTL" get secrets -n "$OTHER_NS" > other.out 2>&1
echo "other=$? $(cat other.out)"
exit 3
`

func TestRunsPodWithItsServiceAccount(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	hub := env.Hub
	ctx := context.Background()
	ns := env.Namespace(t, hub)
	other := env.Namespace(t, hub)

	create(t, hub, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prober"}})
	create(t, hub, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, StringData: map[string]string{"password": "s3cret"}})
	create(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"level": "debug", "hub.yaml": "a: b"}})
	create(t, hub, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "read-configmaps"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
	})
	create(t, hub, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prober"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-configmaps"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "prober"}},
	})

	r := &procruntime.Runtime{
		Root:     t.TempDir(),
		Commands: map[string]string{procruntime.Repository(shellImage): "/bin/sh"},
		Client:   hub.Client,
		Server:   hub.RESTConfig(),
		Clock:    clock.RealClock{},
	}
	spec := corev1.PodSpec{
		ServiceAccountName: "prober",
		Volumes: []corev1.Volume{
			{Name: "settings", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}},
			{Name: "audience", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "flotilla-test", ExpirationSeconds: ptr(int64(600)), Path: "token"}},
			}}}},
		},
		Containers: []corev1.Container{{
			Name:    "probe",
			Image:   shellImage,
			Command: []string{"/bin/sh", "-c", probeScript},
			Args:    []string{"--config=/etc/settings/hub.yaml"},
			Env: []corev1.EnvVar{
				{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "password"}}},
				{Name: "LEVEL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "level"}}},
				{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				{Name: "SETTINGS_DIR", Value: "/etc/settings"},
				{Name: "SA_DIR", Value: procruntime.ServiceAccountDir},
				{Name: "KUBECTL", Value: env.Binaries.Path(localk8s.KubectlBin)},
				{Name: "OTHER_NS", Value: other},
			},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "settings", MountPath: "/etc/settings", ReadOnly: true},
				{Name: "audience", MountPath: "/var/run/audience"},
			},
		}},
	}
	run, err := r.Start(ctx, ns, "prober-0", spec, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Stop(time.Second) })
	select {
	case <-run.Done():
	case <-time.After(60 * time.Second):
		t.Fatalf("the container did not exit within 60s; its log:\n%s", localk8s.LogTail(run.LogPath(), 30))
	}
	if code, exited := run.ExitCode(); !exited || code != 3 {
		t.Errorf("ExitCode() = %d, %t; want 3, true", code, exited)
	}

	out := logLines(t, run.LogPath())
	user := "system:serviceaccount:" + ns + ":prober"
	fs := filepath.Join(run.Dir(), "fs")
	want := map[string]string{
		"password":       "s3cret",
		"level":          "debug",
		"pod":            "prober-0",
		"args":           "--config=" + fs + "/etc/settings/hub.yaml",
		"settings":       "hub.yaml level ",
		"serviceaccount": "ca.crt namespace token ",
		"namespace":      ns,
		"whoami":         user,
		"own":            "0 configmap/settings",
	}
	otherOut := out["other"]
	delete(out, "other")
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("what the container saw (-want +got):\n%s\nlog:\n%s", diff, localk8s.LogTail(run.LogPath(), 30))
	}
	// RBAC refuses the service account what it was not granted: the token is its own, not an
	// administrator's.
	if wantOther := `secrets is forbidden: User "` + user + `" cannot list resource "secrets" in API group "" in the namespace "` + other + `"`; !strings.HasPrefix(otherOut, "1 ") || !strings.Contains(otherOut, wantOther) {
		t.Errorf("listing Secrets in %s: got %q, want exit 1 and %q", other, otherOut, wantOther)
	}

	// The projected token carries its audience: the API server accepts it for that audience.
	token, err := os.ReadFile(filepath.Join(fs, "var/run/audience/token"))
	if err != nil {
		t.Fatal(err)
	}
	review, err := hub.Client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: string(token), Audiences: []string{"flotilla-test"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := []any{review.Status.Authenticated, review.Status.User.Username, review.Status.Audiences}; !cmp.Equal(got, []any{true, user, []string{"flotilla-test"}}) {
		t.Errorf("TokenReview of the projected token = %v, want authenticated as %s for flotilla-test (error %q)", got, user, review.Status.Error)
	}
}

// TestRequiredObjectMissing: a pod whose Secret does not exist does not start, and the error
// names the pod, the container, the volume and the Secret.
func TestRequiredObjectMissing(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ns := env.Namespace(t, env.Hub)
	r := &procruntime.Runtime{Root: t.TempDir(), Commands: map[string]string{shellImage: "/bin/sh"}, Client: env.Hub.Client, Server: env.Hub.RESTConfig(), Clock: clock.RealClock{}}
	spec := corev1.PodSpec{
		AutomountServiceAccountToken: ptr(false),
		Volumes:                      []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "hub-tls"}}}},
		Containers:                   []corev1.Container{{Name: "hub", Image: shellImage, VolumeMounts: []corev1.VolumeMount{{Name: "tls", MountPath: "/tls"}}}},
	}
	_, err := r.Start(context.Background(), ns, "hub-0", spec, "")
	want := "pod " + ns + "/hub-0: container hub: volume tls: secret: Secret " + ns + "/hub-tls not found; create it or set optional: true"
	if err == nil || err.Error() != want {
		t.Fatalf("Start() error = %v, want %q", err, want)
	}
}

func create[T interface {
	*corev1.ServiceAccount | *corev1.Secret | *corev1.ConfigMap | *rbacv1.Role | *rbacv1.RoleBinding | *corev1.Node | *corev1.Pod
}](t *testing.T, c *testenv.Cluster, obj T) {
	t.Helper()
	ctx := context.Background()
	var err error
	switch o := any(obj).(type) {
	case *corev1.ServiceAccount:
		_, err = c.Client.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.Secret:
		_, err = c.Client.CoreV1().Secrets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.ConfigMap:
		_, err = c.Client.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.Role:
		_, err = c.Client.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.RoleBinding:
		_, err = c.Client.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.Node:
		_, err = c.Client.CoreV1().Nodes().Create(ctx, o, metav1.CreateOptions{})
	case *corev1.Pod:
		_, err = c.Client.CoreV1().Pods(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatalf("creating %T: %v", obj, err)
	}
}

// logLines reads key=value lines of a log.
func logLines(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			out[k] = v
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
