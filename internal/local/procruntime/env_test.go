package procruntime

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEnv(t *testing.T) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "settings"},
		Data:       map[string]string{"LEVEL": "debug", "MODE": "fast", "bad=key": "skipped"},
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "creds"},
		Data:       map[string][]byte{"PASSWORD": []byte("s3cret"), "MODE": []byte("from-secret")},
	}
	cmKey := func(name, key string, optional bool) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: &optional}}
	}
	secretKey := func(name, key string, optional bool) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: &optional}}
	}
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	res := func(name, divisor string) *corev1.EnvVarSource {
		sel := &corev1.ResourceFieldSelector{Resource: name}
		if divisor != "" {
			sel.Divisor = resource.MustParse(divisor)
		}
		return &corev1.EnvVarSource{ResourceFieldRef: sel}
	}
	cases := map[string]struct {
		container corev1.Container
		nodeName  string
		want      map[string]string
		wantErr   string
	}{
		"values expand earlier variables and the service's; $$ escapes": {
			container: corev1.Container{Env: []corev1.EnvVar{
				{Name: "A", Value: "a"},
				{Name: "B", Value: "$(A)-b-$(LATER)"},
				{Name: "LATER", Value: "later"},
				{Name: "URL", Value: "https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)"},
				{Name: "LITERAL", Value: "$$(A)"},
				{Name: "EMPTY"},
			}},
			want: map[string]string{"A": "a", "B": "a-b-$(LATER)", "LATER": "later", "URL": "https://127.0.0.1:6443", "LITERAL": "$(A)", "EMPTY": ""},
		},
		"envFrom with prefix, later sources and env win, invalid keys skipped": {
			container: corev1.Container{
				EnvFrom: []corev1.EnvFromSource{
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}},
					{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}},
					{Prefix: "CM_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}},
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Optional: ptr(true)}},
				},
				Env: []corev1.EnvVar{{Name: "LEVEL", Value: "info-$(LEVEL)"}},
			},
			want: map[string]string{"LEVEL": "info-debug", "MODE": "from-secret", "PASSWORD": "s3cret", "CM_LEVEL": "debug", "CM_MODE": "fast"},
		},
		"key references; optional missing ones leave the variable undefined": {
			container: corev1.Container{Env: []corev1.EnvVar{
				{Name: "LEVEL", ValueFrom: cmKey("settings", "LEVEL", false)},
				{Name: "PASSWORD", ValueFrom: secretKey("creds", "PASSWORD", false)},
				{Name: "NO_KEY", ValueFrom: cmKey("settings", "nope", true)},
				{Name: "NO_MAP", ValueFrom: cmKey("absent", "x", true)},
				{Name: "NO_SECRET", ValueFrom: secretKey("absent", "x", true)},
				{Name: "REF", Value: "[$(NO_KEY)]"},
			}},
			want: map[string]string{"LEVEL": "debug", "PASSWORD": "s3cret", "REF": "[$(NO_KEY)]"},
		},
		"field references": {
			container: corev1.Container{Env: []corev1.EnvVar{
				{Name: "NAME", ValueFrom: field("metadata.name")},
				{Name: "NS", ValueFrom: field("metadata.namespace")},
				{Name: "APP", ValueFrom: field("metadata.labels['app']")},
				{Name: "SA", ValueFrom: field("spec.serviceAccountName")},
				{Name: "NODE", ValueFrom: field("spec.nodeName")},
				{Name: "POD_IP", ValueFrom: field("status.podIP")},
				{Name: "HOST_IP", ValueFrom: field("status.hostIP")},
			}},
			want: map[string]string{"NAME": "web-0", "NS": testNS, "APP": "web", "SA": "default", "NODE": "local", "POD_IP": "127.0.0.1", "HOST_IP": "127.0.0.1"},
		},
		"spec.nodeName of a bound pod": {
			container: corev1.Container{Env: []corev1.EnvVar{{Name: "NODE", ValueFrom: field("spec.nodeName")}}},
			nodeName:  "kwok-0",
			want:      map[string]string{"NODE": "kwok-0"},
		},
		"resource references round up by the divisor; unset limits are the node's": {
			container: corev1.Container{
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("100Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")},
				},
				Env: []corev1.EnvVar{
					{Name: "REQ_CPU", ValueFrom: res("requests.cpu", "")},
					{Name: "REQ_CPU_M", ValueFrom: res("requests.cpu", "1m")},
					{Name: "LIM_CPU", ValueFrom: res("limits.cpu", "")},
					{Name: "REQ_MEM_MI", ValueFrom: res("requests.memory", "1Mi")},
					{Name: "LIM_MEM_GI", ValueFrom: res("limits.memory", "1Gi")},
					{Name: "REQ_STORAGE", ValueFrom: res("requests.ephemeral-storage", "")},
				},
			},
			want: map[string]string{"REQ_CPU": "1", "REQ_CPU_M": "250", "LIM_CPU": "2", "REQ_MEM_MI": "100", "LIM_MEM_GI": "16", "REQ_STORAGE": "0"},
		},
		"a required ConfigMap that is missing": {
			container: corev1.Container{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}}}}},
			wantErr:   "envFrom[0].configMapRef: ConfigMap apps/absent not found; create it or set optional: true",
		},
		"a required Secret that is missing": {
			container: corev1.Container{EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}}}}},
			wantErr:   "envFrom[0].secretRef: Secret apps/absent not found; create it or set optional: true",
		},
		"a required key that is missing": {
			container: corev1.Container{Env: []corev1.EnvVar{{Name: "X", ValueFrom: secretKey("creds", "nope", false)}}},
			wantErr:   `env[0] (X): valueFrom.secretKeyRef: Secret apps/creds has no key "nope"; add it or set optional: true`,
		},
		"an unsupported field": {
			container: corev1.Container{Env: []corev1.EnvVar{{Name: "X", ValueFrom: field("spec.hostname")}}},
			wantErr:   `env[0] (X): valueFrom.fieldRef: fieldPath "spec.hostname" is not supported`,
		},
		"an unsupported resource": {
			container: corev1.Container{Env: []corev1.EnvVar{{Name: "X", ValueFrom: res("limits.nvidia.com/gpu", "")}}},
			wantErr:   `env[0] (X): valueFrom.resourceFieldRef: resource "limits.nvidia.com/gpu" is not supported`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, _, _ := newTestRuntime(t, cm, secret)
			tc.container.Name = "app"
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "web-0", Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{NodeName: tc.nodeName, Containers: []corev1.Container{tc.container}},
			}
			v, err := r.newStart(pod, &pod.Spec.Containers[0]).env(context.Background())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("env() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, v.values); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}
