package registration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// BootstrapSecretName is the Secret in the agent namespace on the spoke that `flotilla join`
// writes: the bootstrap kubeconfig and the cluster's name, so that an agent started with only the
// spoke's kubeconfig (or in the cluster) knows how to register.
const BootstrapSecretName = "bootstrap-hub-kubeconfig"

// SaveBootstrap stores the bootstrap kubeconfig and cluster name on the spoke.
func SaveBootstrap(ctx context.Context, spoke kubernetes.Interface, cluster string, kubeconfig []byte) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DefaultNamespace}}
	if _, err := spoke.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s on the cluster: %w", DefaultNamespace, err)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: BootstrapSecretName, Namespace: DefaultNamespace},
		Data:       map[string][]byte{KubeconfigKey: kubeconfig, ClusterNameKey: []byte(cluster)},
	}
	_, err := spoke.CoreV1().Secrets(DefaultNamespace).Create(ctx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = spoke.CoreV1().Secrets(DefaultNamespace).Update(ctx, s, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("storing the bootstrap kubeconfig in Secret %s/%s: %w", DefaultNamespace, BootstrapSecretName, err)
	}
	return nil
}

// LoadBootstrap reads what SaveBootstrap stored.
func LoadBootstrap(ctx context.Context, spoke kubernetes.Interface) (cluster string, cfg *rest.Config, err error) {
	s, err := spoke.CoreV1().Secrets(DefaultNamespace).Get(ctx, BootstrapSecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil, fmt.Errorf("no --bootstrap-kubeconfig and no Secret %s/%s on this cluster: run `flotilla join` first, or pass --bootstrap-kubeconfig",
			DefaultNamespace, BootstrapSecretName)
	}
	if err != nil {
		return "", nil, fmt.Errorf("reading Secret %s/%s: %w", DefaultNamespace, BootstrapSecretName, err)
	}
	cfg, err = clientcmd.RESTConfigFromKubeConfig(s.Data[KubeconfigKey])
	if err != nil {
		return "", nil, fmt.Errorf("the Secret %s/%s holds no usable kubeconfig (%v): run `flotilla join` again", DefaultNamespace, BootstrapSecretName, err)
	}
	return string(s.Data[ClusterNameKey]), cfg, nil
}
