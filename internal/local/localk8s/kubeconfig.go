package localk8s

import (
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/flotilla/flotilla/internal/kubeconfig"
)

// writeKubeconfig writes a kubeconfig for one user of one cluster, with certificates inline so the
// file works from any directory.
func writeKubeconfig(path, clusterName, server string, caPEM, certPEM, keyPEM []byte) error {
	data, err := kubeconfig.Build(clusterName, server, caPEM, &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM})
	if err == nil {
		err = os.WriteFile(path, data, 0o600)
	}
	if err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// RESTConfigFromKubeconfig loads a client configuration from a kubeconfig file.
func RESTConfigFromKubeconfig(path string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}
