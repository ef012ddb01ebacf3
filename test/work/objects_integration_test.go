//go:build integration

package work

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

type obj = map[string]any

func namespace(name string) obj {
	return obj{"apiVersion": "v1", "kind": "Namespace", "metadata": obj{"name": name}}
}

func configMap(ns, name string, data map[string]string) obj {
	return obj{"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj{"name": name, "namespace": ns}, "data": data}
}

func deployment(ns, name string, replicas int) obj {
	labels := obj{"app": name}
	return obj{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": obj{"name": name, "namespace": ns},
		"spec": obj{"replicas": replicas, "selector": obj{"matchLabels": labels},
			"template": obj{"metadata": obj{"labels": labels},
				"spec": obj{"containers": []any{obj{"name": "main", "image": "registry.k8s.io/pause:3.10"}}}}}}
}

func job(ns, name string) obj {
	return obj{"apiVersion": "batch/v1", "kind": "Job", "metadata": obj{"name": name, "namespace": ns},
		"spec": obj{"completions": 2, "parallelism": 2, "template": obj{"spec": obj{"restartPolicy": "Never",
			"containers": []any{obj{"name": "train", "image": "registry.k8s.io/pause:3.10",
				"resources": obj{"limits": obj{"nvidia.com/gpu": 1}}}}}}}} // a number, as users write it: it comes back "1"
}

// spokeNamespace creates a namespace on the spoke directly (not by a work).
func spokeNamespace(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
