package procruntime

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCommand(t *testing.T) {
	cases := map[string]struct {
		container corev1.Container
		want      []string
		wantErr   string
	}{
		"args only: the executable stands for the entry point": {
			container: corev1.Container{Image: "example.com/app:v1", Args: []string{"serve", "--name=$(NAME)"}},
			want:      []string{"/bin/true", "serve", "--name=web"},
		},
		"command[0] with the executable's base name is replaced": {
			container: corev1.Container{Image: "busybox", Command: []string{"/bin/sh", "-c"}, Args: []string{"echo $(NAME) $$(NAME) $HOME"}},
			want:      []string{"/bin/sh", "-c", "echo web $(NAME) $HOME"},
		},
		"a base name alone matches": {
			container: corev1.Container{Image: "busybox:1.36", Command: []string{"sh", "-c", "true"}},
			want:      []string{"/bin/sh", "-c", "true"},
		},
		"the repository of a reference with a digest": {
			container: corev1.Container{Image: "example.com/app@sha256:0123", Args: []string{"x"}},
			want:      []string{"/bin/true", "x"},
		},
		"another program as command[0]": {
			container: corev1.Container{Image: "example.com/app:v1", Command: []string{"/usr/bin/env", "app"}},
			wantErr:   `command[0] "/usr/bin/env" is not the program the runtime runs for image example.com/app:v1 (/bin/true); the runtime replaces command[0] only when its base name is "true"`,
		},
		"an image without a local program": {
			container: corev1.Container{Image: "quay.io/other/thing:v2"},
			wantErr:   `image quay.io/other/thing:v2 has no local program; add "quay.io/other/thing:v2" (or "quay.io/other/thing") to the runtime's Commands`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, _, _ := newTestRuntime(t)
			tc.container.Name = "app"
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "web-0"}, Spec: corev1.PodSpec{Containers: []corev1.Container{tc.container}}}
			got, err := r.newStart(pod, &pod.Spec.Containers[0]).command(&vars{values: map[string]string{"NAME": "web"}})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("command() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRepository(t *testing.T) {
	cases := map[string]string{
		"flotilla":                               "flotilla",
		"flotilla:dev":                           "flotilla",
		"ghcr.io/flotilla/flotilla:v0.1.0":       "ghcr.io/flotilla/flotilla",
		"localhost:5000/flotilla":                "localhost:5000/flotilla",
		"localhost:5000/flotilla:v1":             "localhost:5000/flotilla",
		"ghcr.io/flotilla/flotilla:v1@sha256:ab": "ghcr.io/flotilla/flotilla",
	}
	for in, want := range cases {
		if got := Repository(in); got != want {
			t.Errorf("Repository(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRewrite(t *testing.T) {
	s := &start{dir: "/root/ns/pod"}
	prefixes := []string{"/etc/config", ServiceAccountDir, "/data"}
	cases := map[string]string{
		"/etc/config":                             "/root/ns/pod/fs/etc/config",
		"/etc/config/hub.yaml":                    "/root/ns/pod/fs/etc/config/hub.yaml",
		"--config=/etc/config/hub.yaml":           "--config=/root/ns/pod/fs/etc/config/hub.yaml",
		"--token=" + ServiceAccountDir + "/token": "--token=/root/ns/pod/fs" + ServiceAccountDir + "/token",
		"/data/../data/x":                         "/root/ns/pod/fs/data/x",
		"/etc/configs/other":                      "/etc/configs/other",
		"--config=/etc/other":                     "--config=/etc/other",
		"relative/etc/config":                     "relative/etc/config",
		"--a=b=/data":                             "--a=b=/data",
		"KEY=/data/file":                          "KEY=/root/ns/pod/fs/data/file",
		"":                                        "",
	}
	for in, want := range cases {
		if got := s.rewrite(in, prefixes); got != want {
			t.Errorf("rewrite(%q) = %q, want %q", in, got, want)
		}
	}
}
