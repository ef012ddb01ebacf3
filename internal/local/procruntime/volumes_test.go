package procruntime

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestVolumes(t *testing.T) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "settings"},
		Data:       map[string]string{"hub.yaml": "level: debug", "extra": "x"},
		BinaryData: map[string][]byte{"blob": {0x01}},
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "creds"},
		Data:       map[string][]byte{"tls.crt": []byte("CERT"), "tls.key": []byte("KEY")},
	}
	noAutomount := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "quiet"}, AutomountServiceAccountToken: ptr(false)}
	hubSA := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "hub"}}
	vol := func(name string, src corev1.VolumeSource) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: src}
	}
	ref := func(name string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: name} }
	saFiles := func(token string) map[string]string {
		return map[string]string{
			ServiceAccountDir + "/token":     "0644 " + token,
			ServiceAccountDir + "/ca.crt":    "0644 test CA",
			ServiceAccountDir + "/namespace": "0644 " + testNS,
		}
	}
	with := func(a, b map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range a {
			out[k] = v
		}
		for k, v := range b {
			out[k] = v
		}
		return out
	}
	noSA := ptr(false)
	cases := map[string]struct {
		pod          corev1.PodSpec
		uid          string
		want         map[string]string
		wantRequests []tokenRequest
		wantErr      string
	}{
		"secret with all keys, configMap with items and modes, emptyDir, subPath": {
			pod: corev1.PodSpec{
				AutomountServiceAccountToken: noSA,
				Volumes: []corev1.Volume{
					vol("tls", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: ptr(int32(0o400))}}),
					vol("config", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("settings"), Items: []corev1.KeyToPath{
						{Key: "hub.yaml", Path: "conf/hub.yaml"}, {Key: "blob", Path: "blob.bin", Mode: ptr(int32(0o600))},
					}}}),
					vol("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
					vol("whole", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("settings")}}),
				},
				Containers: []corev1.Container{{VolumeMounts: []corev1.VolumeMount{
					{Name: "tls", MountPath: "/etc/tls"},
					{Name: "config", MountPath: "/etc/flotilla/"},
					{Name: "scratch", MountPath: "/tmp/scratch"},
					{Name: "whole", MountPath: "/etc/extra.txt", SubPath: "extra"},
				}}},
			},
			want: map[string]string{
				"/etc/tls/tls.crt":            "0400 CERT",
				"/etc/tls/tls.key":            "0400 KEY",
				"/etc/flotilla/conf/hub.yaml": "0644 level: debug",
				"/etc/flotilla/blob.bin":      "0600 \x01",
				"/etc/extra.txt":              "0644 x",
			},
		},
		"optional missing objects give empty volumes": {
			pod: corev1.PodSpec{
				AutomountServiceAccountToken: noSA,
				Volumes: []corev1.Volume{
					vol("a", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "absent", Optional: ptr(true)}}),
					vol("b", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("absent"), Optional: ptr(true)}}),
					vol("c", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("settings"), Optional: ptr(true), Items: []corev1.KeyToPath{{Key: "nope", Path: "nope"}, {Key: "extra", Path: "e"}}}}),
				},
				Containers: []corev1.Container{{VolumeMounts: []corev1.VolumeMount{{Name: "a", MountPath: "/a"}, {Name: "b", MountPath: "/b"}, {Name: "c", MountPath: "/c"}}}},
			},
			want: map[string]string{"/c/e": "0644 x"},
		},
		"projected: token with audience, configMap, secret, downwardAPI; automount by default": {
			uid: "uid-1",
			pod: corev1.PodSpec{
				ServiceAccountName: "hub",
				Volumes: []corev1.Volume{vol("bundle", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					DefaultMode: ptr(int32(0o440)),
					Sources: []corev1.VolumeProjection{
						{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "flotilla", ExpirationSeconds: ptr(int64(600)), Path: "hub-token"}},
						{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ref("settings"), Items: []corev1.KeyToPath{{Key: "hub.yaml", Path: "hub.yaml"}}}},
						{Secret: &corev1.SecretProjection{LocalObjectReference: ref("creds"), Items: []corev1.KeyToPath{{Key: "tls.crt", Path: "tls/tls.crt", Mode: ptr(int32(0o444))}}}},
						{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
							{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
							{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
						}}},
					},
				}})},
				Containers: []corev1.Container{{VolumeMounts: []corev1.VolumeMount{{Name: "bundle", MountPath: "/var/run/bundle"}}}},
			},
			want: with(saFiles("token-2:hub:[]"), map[string]string{
				"/var/run/bundle/hub-token":   "0440 token-1:hub:[flotilla]",
				"/var/run/bundle/hub.yaml":    "0440 level: debug",
				"/var/run/bundle/tls/tls.crt": "0444 CERT",
				"/var/run/bundle/labels":      "0440 app=\"web\"\ntier=\"front \\\"end\\\"\"",
				"/var/run/bundle/name":        "0440 web-0",
			}),
			wantRequests: []tokenRequest{
				{ServiceAccount: "hub", Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"flotilla"}, ExpirationSeconds: ptr(int64(600)), BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "web-0", UID: "uid-1"}}},
				{ServiceAccount: "hub", Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3607)), BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "web-0", UID: "uid-1"}}},
			},
		},
		"downwardAPI volume with a resource": {
			pod: corev1.PodSpec{
				AutomountServiceAccountToken: noSA,
				Volumes: []corev1.Volume{vol("info", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "ns", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}},
					{Path: "cpu", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu"}},
				}}})},
				Containers: []corev1.Container{{VolumeMounts: []corev1.VolumeMount{{Name: "info", MountPath: "/etc/podinfo"}}}},
			},
			want: map[string]string{"/etc/podinfo/ns": "0644 " + testNS, "/etc/podinfo/cpu": "0644 8"},
		},
		"automount off on the ServiceAccount": {
			pod:  corev1.PodSpec{ServiceAccountName: "quiet", Containers: []corev1.Container{{}}},
			want: map[string]string{},
		},
		"automount on the pod wins over the ServiceAccount": {
			pod:          corev1.PodSpec{ServiceAccountName: "quiet", AutomountServiceAccountToken: ptr(true), Containers: []corev1.Container{{}}},
			want:         saFiles("token-1:quiet:[]"),
			wantRequests: []tokenRequest{{ServiceAccount: "quiet", Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3607))}}},
		},
		"a pod's own service-account volume replaces the automount": {
			pod: corev1.PodSpec{
				Volumes: []corev1.Volume{vol("kube-api-access-x1", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr(int64(3607)), Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ref("settings"), Items: []corev1.KeyToPath{{Key: "extra", Path: "ca.crt"}}}},
				}}})},
				Containers: []corev1.Container{{VolumeMounts: []corev1.VolumeMount{{Name: "kube-api-access-x1", MountPath: ServiceAccountDir}}}},
			},
			want:         map[string]string{ServiceAccountDir + "/token": "0644 token-1:default:[]", ServiceAccountDir + "/ca.crt": "0644 x"},
			wantRequests: []tokenRequest{{ServiceAccount: "default", Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3607))}}},
		},
		"a required Secret that is missing": {
			pod: corev1.PodSpec{
				Volumes:    []corev1.Volume{vol("tls", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "absent"}})},
				Containers: []corev1.Container{{VolumeMounts: []corev1.VolumeMount{{Name: "tls", MountPath: "/etc/tls"}}}},
			},
			wantErr: "pod apps/web-0: container app: volume tls: secret: Secret apps/absent not found; create it or set optional: true",
		},
		"a required key that is missing": {
			pod: corev1.PodSpec{
				Volumes:    []corev1.Volume{vol("c", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("settings"), Items: []corev1.KeyToPath{{Key: "nope", Path: "n"}}}})},
				Containers: []corev1.Container{{VolumeMounts: []corev1.VolumeMount{{Name: "c", MountPath: "/c"}}}},
			},
			wantErr: `pod apps/web-0: container app: volume c: configMap.items[0]: no key "nope"; add it or set optional: true`,
		},
		"a missing ServiceAccount": {
			pod:     corev1.PodSpec{ServiceAccountName: "ghost", Containers: []corev1.Container{{}}},
			wantErr: "pod apps/web-0: container app: spec.serviceAccountName: ServiceAccount apps/ghost not found; create it, or set automountServiceAccountToken: false",
		},
		"a mount of an undeclared volume": {
			pod:     corev1.PodSpec{Containers: []corev1.Container{{VolumeMounts: []corev1.VolumeMount{{Name: "nope", MountPath: "/x"}}}}},
			wantErr: `pod apps/web-0: container app: volumeMounts[0] (nope): the pod has no volume "nope" in spec.volumes`,
		},
		"an item path that leaves the volume": {
			pod: corev1.PodSpec{
				AutomountServiceAccountToken: noSA,
				Volumes:                      []corev1.Volume{vol("c", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("settings"), Items: []corev1.KeyToPath{{Key: "extra", Path: "../escape"}}}})},
				Containers:                   []corev1.Container{{VolumeMounts: []corev1.VolumeMount{{Name: "c", MountPath: "/c"}}}},
			},
			wantErr: `volume c: configMap.items[0]: path "../escape" must be a relative path without '..'`,
		},
		"an unsupported volume type": {
			pod: corev1.PodSpec{
				AutomountServiceAccountToken: noSA,
				Volumes:                      []corev1.Volume{vol("data", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv"}})},
				Containers:                   []corev1.Container{{VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			},
			wantErr: "volume data: the process runtime supports secret, configMap, emptyDir, projected and downwardAPI volumes",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, _, log := newTestRuntime(t, cm, secret, noAutomount, hubSA)
			tc.pod.Containers[0].Name = "app"
			tc.pod.Containers[0].Image = "example.com/app"
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "web-0", UID: typesUID(tc.uid), Labels: map[string]string{"app": "web", "tier": `front "end"`}},
				Spec:       tc.pod,
			}
			run, err := r.StartPod(context.Background(), pod, "")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("StartPod() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			waitExit(t, run)
			if diff := cmp.Diff(tc.want, tree(t, filepath.Join(run.Dir(), fsDir))); diff != "" {
				t.Errorf("files under fs/ (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRequests, log.all()); diff != "" {
				t.Errorf("TokenRequests (-want +got):\n%s", diff)
			}
		})
	}
}
