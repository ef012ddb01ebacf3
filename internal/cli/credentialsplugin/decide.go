package credentialsplugin

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
)

// ExecInfoEnv is where client-go passes the plugin its input.
const ExecInfoEnv = "KUBERNETES_EXEC_INFO"

// Versions of the ExecCredential the plugin speaks: it answers in the version it was asked in.
var apiVersions = []string{"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"}

// execInfo is the part of client-go's ExecCredential the plugin reads.
type execInfo struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		Cluster *struct {
			Server string          `json:"server"`
			Config json.RawMessage `json:"config"`
		} `json:"cluster"`
	} `json:"spec"`
}

// clusterName reads the cluster a consumer asks about from KUBERNETES_EXEC_INFO, and the
// ExecCredential version to answer in.
func clusterName(raw string) (name, apiVersion string, err error) {
	if strings.TrimSpace(raw) == "" {
		return "", "", fmt.Errorf("%s is not set: run this plugin from client-go's exec authentication (a ClusterProfile consumer's credentials provider), not by hand", ExecInfoEnv)
	}
	var in execInfo
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		return "", "", fmt.Errorf("%s is not an ExecCredential: %w", ExecInfoEnv, err)
	}
	if in.Kind != "ExecCredential" || !contains(apiVersions, in.APIVersion) {
		return "", "", fmt.Errorf("%s holds %s %s, want an ExecCredential of %s", ExecInfoEnv, in.APIVersion, in.Kind, strings.Join(apiVersions, " or "))
	}
	if in.Spec.Cluster == nil || len(in.Spec.Cluster.Config) == 0 || string(in.Spec.Cluster.Config) == "null" {
		return "", "", fmt.Errorf("%s has no spec.cluster.config: set provideClusterInfo: true in the consumer's provider execConfig, and use a ClusterProfile "+
			"whose open-cluster-management access provider carries the extension client.authentication.k8s.io/exec", ExecInfoEnv)
	}
	var cfg struct {
		ClusterName string `json:"clusterName"`
	}
	if err := json.Unmarshal(in.Spec.Cluster.Config, &cfg); err != nil {
		return "", "", fmt.Errorf("%s spec.cluster.config is not {\"clusterName\": NAME}: %w", ExecInfoEnv, err)
	}
	if errs := validation.IsDNS1123Label(cfg.ClusterName); len(errs) > 0 {
		return "", "", fmt.Errorf("%s spec.cluster.config.clusterName %q is not a cluster name: %s", ExecInfoEnv, cfg.ClusterName, strings.Join(errs, "; "))
	}
	return cfg.ClusterName, in.APIVersion, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// credential decides what to hand out for cluster mc from ManagedServiceAccount m and its token
// Secret s: the token and when client-go should ask again, or why not.
func credential(mc *clusterv1.ManagedCluster, m *authv1beta1.ManagedServiceAccount, s *corev1.Secret, now time.Time) (string, time.Time, error) {
	switch {
	case !mc.DeletionTimestamp.IsZero():
		return "", time.Time{}, fmt.Errorf("cluster %s is being deleted: no credentials are handed out for it", mc.Name)
	case !mc.Spec.HubAcceptsClient:
		return "", time.Time{}, fmt.Errorf("cluster %s is not accepted by the hub (spec.hubAcceptsClient is false): no credentials are handed out for it", mc.Name)
	}
	where := fmt.Sprintf("ManagedServiceAccount %s/%s", m.Namespace, m.Name)
	if why := m.TokenPending(); why != "" {
		return "", time.Time{}, fmt.Errorf("%s %s", where, why)
	}
	if !m.OwnsTokenSecret(s) {
		return "", time.Time{}, fmt.Errorf("the Secret %s/%s was not made for %s (label %s=true and an owner reference to it): not handing out what it holds",
			s.Namespace, s.Name, where, authv1beta1.LabelIsManagedServiceAccount)
	}
	token := string(s.Data[corev1.ServiceAccountTokenKey])
	if token == "" {
		return "", time.Time{}, fmt.Errorf("the Secret %s/%s of %s holds no token yet", s.Namespace, s.Name, where)
	}
	expires := m.Status.ExpirationTimestamp.Time
	if !now.Before(expires) {
		return "", time.Time{}, fmt.Errorf("the token of %s expired at %s and the cluster's agent has not replaced it: is the cluster's agent running and ManagedClusterAddOn managed-serviceaccount available?",
			where, expires.UTC().Format(time.RFC3339))
	}
	last := m.Status.TokenSecretRef.LastRefreshTimestamp.Time
	again := last.Add(time.Duration(float64(expires.Sub(last)) * authv1beta1.TokenRefreshFraction))
	if !again.After(now) {
		// Due for rotation and not rotated yet: ask again soon, while it still works.
		again = now.Add(time.Minute)
		if expires.Before(again) {
			again = expires
		}
	}
	return token, again, nil
}
