package procruntime

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// objects reads the ConfigMaps and Secrets of one pod's namespace, each once per start, as the
// kubelet reads each once per container start.
type objects struct {
	client     kubernetes.Interface
	namespace  string
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

func newObjects(client kubernetes.Interface, namespace string) *objects {
	return &objects{client: client, namespace: namespace, configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
}

// configMap returns the named ConfigMap, or nil when it does not exist.
func (o *objects) configMap(ctx context.Context, name string) (*corev1.ConfigMap, error) {
	if cm, ok := o.configMaps[name]; ok {
		return cm, nil
	}
	cm, err := o.client.CoreV1().ConfigMaps(o.namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	o.configMaps[name] = cm
	return cm, nil
}

// secret returns the named Secret, or nil when it does not exist.
func (o *objects) secret(ctx context.Context, name string) (*corev1.Secret, error) {
	if s, ok := o.secrets[name]; ok {
		return s, nil
	}
	s, err := o.client.CoreV1().Secrets(o.namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		s, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	o.secrets[name] = s
	return s, nil
}

// configMapData is a ConfigMap's data and binary data as bytes; nil for a missing ConfigMap.
func configMapData(cm *corev1.ConfigMap) map[string][]byte {
	if cm == nil {
		return nil
	}
	out := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		out[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		out[k] = v
	}
	return out
}

// secretData is a Secret's data, with stringData folded in as the API server does on write (a
// Secret built by a test's fake client may carry it); nil for a missing Secret.
func secretData(s *corev1.Secret) map[string][]byte {
	if s == nil {
		return nil
	}
	out := make(map[string][]byte, len(s.Data)+len(s.StringData))
	for k, v := range s.Data {
		out[k] = v
	}
	for k, v := range s.StringData {
		out[k] = []byte(v)
	}
	return out
}
