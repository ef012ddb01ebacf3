package procruntime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
)

// TestStart runs a shell as a pod's container and checks what it is given: argv, environment,
// working directory, files, the kubeconfig of its service account, and its exit code.
func TestStart(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "settings"}, Data: map[string]string{"hub.yaml": "level: debug"}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "hub"}}
	r, _, _ := newTestRuntime(t, cm, sa)
	spec := corev1.PodSpec{
		ServiceAccountName: "hub",
		Volumes:            []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}},
		Containers: []corev1.Container{{
			Name:         "hub",
			Image:        "busybox:1.36",
			Command:      []string{"/bin/sh", "-c"},
			Args:         []string{`cat "$CONFIG"; echo; pwd; cat /etc/config/hub.yaml 2>/dev/null || echo "no /etc/config here"; exit 7`, "--config=/etc/config/hub.yaml"},
			Env:          []corev1.EnvVar{{Name: "CONFIG", Value: "/etc/config/hub.yaml"}},
			WorkingDir:   "/work",
			VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/config"}},
		}},
	}
	run, err := r.Start(context.Background(), testNS, "hub-0", spec, "hub")
	if err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, run); code != 7 {
		t.Errorf("exit code = %d, want 7", code)
	}
	dir := r.PodDir(testNS, "hub-0")
	fs := filepath.Join(dir, fsDir)

	wantArgs := []string{"/bin/sh", "-c", spec.Containers[0].Args[0], "--config=" + fs + "/etc/config/hub.yaml"}
	if diff := cmp.Diff(wantArgs, run.Args()); diff != "" {
		t.Errorf("Args (-want +got):\n%s", diff)
	}
	wantEnv := []string{
		"CONFIG=" + fs + "/etc/config/hub.yaml",
		"HOME=" + dir,
		"HOSTNAME=hub-0",
		"KUBECONFIG=" + filepath.Join(dir, kubeconfigFile),
		"KUBERNETES_SERVICE_HOST=127.0.0.1",
		"KUBERNETES_SERVICE_PORT=6443",
		"PATH=" + os.Getenv("PATH"),
	}
	if diff := cmp.Diff(wantEnv, run.Env()); diff != "" {
		t.Errorf("Env (-want +got):\n%s", diff)
	}
	log, err := os.ReadFile(run.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("level: debug\n"+fs+"/work\nno /etc/config here\n", string(log)); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if got, want := run.LogPath(), filepath.Join(dir, logsDir, "hub.log"); got != want {
		t.Errorf("LogPath = %s, want %s", got, want)
	}

	kc, err := clientcmd.LoadFromFile(filepath.Join(dir, kubeconfigFile))
	if err != nil {
		t.Fatal(err)
	}
	ctx := kc.Contexts[kc.CurrentContext]
	saDir := fs + ServiceAccountDir
	got := []string{kc.Clusters[ctx.Cluster].Server, kc.Clusters[ctx.Cluster].CertificateAuthority, kc.AuthInfos[ctx.AuthInfo].TokenFile, ctx.Namespace}
	if diff := cmp.Diff([]string{"https://127.0.0.1:6443", saDir + "/ca.crt", saDir + "/token", testNS}, got); diff != "" {
		t.Errorf("kubeconfig's server, CA, token file, namespace (-want +got):\n%s", diff)
	}
	if _, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, kubeconfigFile)); err != nil {
		t.Errorf("client-go cannot load the kubeconfig: %v", err)
	}
}

// TestContainerKubeconfig: a container that sets KUBECONFIG keeps it (with its path rewritten).
func TestContainerKubeconfig(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "hub-kubeconfig"}, Data: map[string][]byte{"kubeconfig": []byte("apiVersion: v1")}}
	r, _, _ := newTestRuntime(t, secret)
	spec := corev1.PodSpec{
		Volumes: []corev1.Volume{{Name: "hub", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "hub-kubeconfig"}}}},
		Containers: []corev1.Container{{
			Name:         "agent",
			Image:        "example.com/app:v1",
			Env:          []corev1.EnvVar{{Name: "KUBECONFIG", Value: "/var/run/hub/kubeconfig"}},
			VolumeMounts: []corev1.VolumeMount{{Name: "hub", MountPath: "/var/run/hub"}},
		}},
	}
	run, err := r.Start(context.Background(), testNS, "agent-0", spec, "")
	if err != nil {
		t.Fatal(err)
	}
	waitExit(t, run)
	want := "KUBECONFIG=" + filepath.Join(r.PodDir(testNS, "agent-0"), fsDir, "var/run/hub/kubeconfig")
	var got []string
	for _, e := range run.Env() {
		if strings.HasPrefix(e, "KUBECONFIG=") {
			got = append(got, e)
		}
	}
	if diff := cmp.Diff([]string{want}, got); diff != "" {
		t.Errorf("KUBECONFIG (-want +got):\n%s", diff)
	}
}

// TestTokenRenewal: each token is renewed once 80% of its lifetime has passed by the clock, and
// not before.
func TestTokenRenewal(t *testing.T) {
	r, clk, _ := newTestRuntime(t)
	spec := corev1.PodSpec{
		Volumes: []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "hub", ExpirationSeconds: ptr(int64(600)), Path: "token"}},
		}}}}},
		Containers: []corev1.Container{{Name: "app", Image: "example.com/app", VolumeMounts: []corev1.VolumeMount{{Name: "t", MountPath: "/var/run/t"}}}},
	}
	run, err := r.Start(context.Background(), testNS, "web-0", spec, "")
	if err != nil {
		t.Fatal(err)
	}
	waitExit(t, run)
	fs := filepath.Join(run.Dir(), fsDir)
	read := func() []string {
		var out []string
		for _, p := range []string{"/var/run/t/token", ServiceAccountDir + "/token"} {
			data, err := os.ReadFile(filepath.Join(fs, p))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(data))
		}
		return out
	}
	steps := []struct {
		after time.Duration
		want  []string
	}{
		{after: 479 * time.Second, want: []string{"token-1:default:[hub]", "token-2:default:[]"}},
		{after: 480 * time.Second, want: []string{"token-3:default:[hub]", "token-2:default:[]"}},
		{after: 959 * time.Second, want: []string{"token-3:default:[hub]", "token-2:default:[]"}},
		{after: 960 * time.Second, want: []string{"token-4:default:[hub]", "token-2:default:[]"}},
		{after: 2886 * time.Second, want: []string{"token-5:default:[hub]", "token-6:default:[]"}},
	}
	for _, s := range steps {
		clk.SetTime(testNow.Add(s.after))
		if err := run.RenewTokens(context.Background()); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(s.want, read()); diff != "" {
			t.Errorf("tokens after %s (-want +got):\n%s", s.after, diff)
		}
	}
}

func TestStartErrors(t *testing.T) {
	spec := corev1.PodSpec{AutomountServiceAccountToken: ptr(false), Containers: []corev1.Container{{Name: "app", Image: "example.com/app"}}}
	cases := map[string]struct {
		mutate  func(*Runtime)
		ns, pod string
		name    string
		wantErr string
	}{
		"unknown container": {ns: testNS, pod: "p", name: "sidecar", wantErr: `pod apps/p: no container "sidecar" (containers: app)`},
		"no pod name":       {ns: testNS, wantErr: "a pod needs a namespace and a name"},
		"no server":         {ns: testNS, pod: "p", mutate: func(r *Runtime) { r.Server = nil }, wantErr: "pod apps/p: Runtime.Server has no Host"},
		"bad server":        {ns: testNS, pod: "p", mutate: func(r *Runtime) { r.Server.Host = "https://" }, wantErr: `pod apps/p: container app: Runtime.Server.Host "https://" is not a URL`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, _, _ := newTestRuntime(t)
			if tc.mutate != nil {
				tc.mutate(r)
			}
			_, err := r.Start(context.Background(), tc.ns, tc.pod, spec, tc.name)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Start() error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
