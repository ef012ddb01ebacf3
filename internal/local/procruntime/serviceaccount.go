package procruntime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/flotilla/flotilla/internal/kubeconfig"
)

// automount reports whether the container gets the service-account volume the API server's
// admission would add: not when the container mounts something at ServiceAccountDir itself (a
// pod read back from the API server carries its kube-api-access volume already), else as
// automountServiceAccountToken of the pod, else of the ServiceAccount, says (default true).
func (s *start) automount(ctx context.Context) (bool, error) {
	for _, vm := range s.c.VolumeMounts {
		if filepath.Clean(vm.MountPath) == ServiceAccountDir {
			return false, nil
		}
	}
	if b := s.pod.Spec.AutomountServiceAccountToken; b != nil {
		return *b, nil
	}
	name := serviceAccountName(&s.pod.Spec)
	sa, err := s.r.Client.CoreV1().ServiceAccounts(s.pod.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, fmt.Errorf("spec.serviceAccountName: ServiceAccount %s/%s not found; create it, or set automountServiceAccountToken: false", s.pod.Namespace, name)
	}
	if err != nil {
		return false, fmt.Errorf("spec.serviceAccountName: reading ServiceAccount %s/%s: %w", s.pod.Namespace, name, err)
	}
	if b := sa.AutomountServiceAccountToken; b != nil {
		return *b, nil
	}
	return true, nil
}

// automountFiles are the files of the automounted service-account volume: a token of the
// lifetime admission gives it, the CA of Runtime.Server (a kubelet takes the kube-root-ca.crt
// ConfigMap, which holds the cluster's CA) and the namespace.
func (s *start) automountFiles(ctx context.Context) (map[string]file, error) {
	data, ts, err := s.token(ctx, nil, automountTokenSeconds)
	if err != nil {
		return nil, fmt.Errorf("service-account token: %w", err)
	}
	ca, err := kubeconfig.CA(s.r.Server)
	if err != nil {
		return nil, fmt.Errorf("Runtime.Server: %w", err)
	}
	return map[string]file{
		"token":     {data: data, mode: defaultFileMode, token: ts},
		"ca.crt":    {data: ca, mode: defaultFileMode},
		"namespace": {data: []byte(s.pod.Namespace), mode: defaultFileMode},
	}, nil
}

// kubeconfig writes the pod's kubeconfig when the container has a service-account folder, and
// returns its path. client-go's in-cluster configuration reads the fixed paths under
// ServiceAccountDir, which a local process does not have; the kubeconfig points at the same
// token and CA under the pod's fs folder instead, with Runtime.Server's address.
func (s *start) kubeconfig(mounts []mount) (string, bool, error) {
	found := false
	for _, m := range mounts {
		found = found || m.path == ServiceAccountDir
	}
	if !found {
		return "", false, nil
	}
	saDir := s.fsPath(ServiceAccountDir)
	cluster := &clientcmdapi.Cluster{Server: s.r.Server.Host}
	if _, err := os.Stat(filepath.Join(saDir, "ca.crt")); err == nil {
		cluster.CertificateAuthority = filepath.Join(saDir, "ca.crt")
	} else {
		ca, err := kubeconfig.CA(s.r.Server)
		if err != nil {
			return "", false, fmt.Errorf("Runtime.Server: %w", err)
		}
		cluster.CertificateAuthorityData = ca
	}
	cfg := clientcmdapi.NewConfig()
	const name = "in-cluster"
	cfg.Clusters[name] = cluster
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{TokenFile: filepath.Join(saDir, "token")}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: s.pod.Namespace}
	cfg.CurrentContext = name
	path := filepath.Join(s.dir, kubeconfigFile)
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", false, fmt.Errorf("writing the service account's kubeconfig: %w", err)
	}
	return path, true, nil
}
