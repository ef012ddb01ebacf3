package registration

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// clusterNameRule is the rule a cluster name follows: the name of the cluster's namespace on the
// hub, so a DNS-1123 label.
const clusterNameRule = "a cluster name is a DNS-1123 label: 1 to 63 characters, lowercase letters, digits and '-', " +
	"starting and ending with a letter or digit (such as gpu-east)"

// ValidateClusterName checks a cluster name. The error names field (a flag such as
// --cluster-name), the value, what is wrong with it and the rule.
func ValidateClusterName(field, name string) error {
	if name == "" {
		return fmt.Errorf("%s is required: %s", field, clusterNameRule)
	}
	if why := clusterNameProblem(name); why != "" {
		return fmt.Errorf("%s %q is not a valid cluster name: %s; %s", field, name, why, clusterNameRule)
	}
	return nil
}

// clusterNameProblem says what breaks the rule, or "" when nothing does.
func clusterNameProblem(name string) string {
	if n := len(name); n > 63 {
		return fmt.Sprintf("it is %d characters long", n)
	}
	for i, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return fmt.Sprintf("it has %q at position %d", r, i+1)
		}
	}
	if name[0] == '-' {
		return "it starts with '-'"
	}
	if name[len(name)-1] == '-' {
		return "it ends with '-'"
	}
	return ""
}

// LoadKubeconfig reads the kubeconfig file that field (a flag such as --bootstrap-kubeconfig)
// names and returns its client configuration. what describes the file for the errors, which say
// whether it is missing, does not parse, or lacks a server or credentials.
func LoadKubeconfig(field, path, what string) (*rest.Config, error) {
	if path == "" {
		return nil, fmt.Errorf("%s is required: %s", field, what)
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s %s: no such file; pass %s", field, path, what)
	case err != nil:
		return nil, fmt.Errorf("%s %s: %w", field, path, err)
	case st.IsDir():
		return nil, fmt.Errorf("%s %s is a directory; pass %s", field, path, what)
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s does not parse as a kubeconfig (%v); pass %s", field, path, err, what)
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("%s %s is not a usable kubeconfig (%v); pass %s", field, path, err, what)
	}
	if rc.BearerToken == "" && rc.BearerTokenFile == "" && len(rc.CertData) == 0 && rc.CertFile == "" &&
		rc.ExecProvider == nil && rc.AuthProvider == nil && rc.Username == "" {
		return nil, fmt.Errorf("%s %s has no credentials (a token or a client certificate) for its server %s; pass %s", field, path, rc.Host, what)
	}
	return rc, nil
}

// maxClientConfigs is how many spec.managedClusterClientConfigs a ManagedCluster holds.
const maxClientConfigs = 32

// ValidateExternalServerURLs checks the addresses of the cluster's API server an agent writes
// into its ManagedCluster (Options.ExternalServerURLs) as the hub's API server does: each an
// absolute https URL with a host, at most 32.
func ValidateExternalServerURLs(field string, urls []string) error {
	if len(urls) > maxClientConfigs {
		return fmt.Errorf("%s names %d addresses: a ManagedCluster holds at most %d in spec.managedClusterClientConfigs", field, len(urls), maxClientConfigs)
	}
	for i, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("%s[%d] %q is not an absolute https URL: give the address at which the hub reaches this cluster's API server, "+
				"such as https://api.gpu-east-1.example.com:6443", field, i, raw)
		}
	}
	return nil
}
