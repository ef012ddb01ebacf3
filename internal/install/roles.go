package install

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla/flotilla/config/rbac"
	"github.com/flotilla/flotilla/internal/contract/wellknown"
)

// AgentRoles makes the ClusterRoles the hub binds for cluster agents without holding their rules
// itself (rbac.ManagedServiceAccountAgentRole), or brings them back to their rules; the hub chart
// makes them too. It needs a hub administrator's rights.
func AgentRoles(ctx context.Context, cfg *rest.Config) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	want := rbac.ManagedServiceAccountAgentRole()
	api := cs.RbacV1().ClusterRoles()
	got, err := api.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		// Labeled, so that `flotilla uninstall hub` knows Flotilla made it (the chart's carries
		// the release's labels instead, and is only brought back to its rules here).
		want.Labels = map[string]string{wellknown.PartOfLabel: wellknown.PartOf}
		_, err = api.Create(ctx, want, metav1.CreateOptions{})
	case err == nil:
		got.Rules = want.Rules
		_, err = api.Update(ctx, got, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("applying ClusterRole %s: %w", want.Name, err)
	}
	return nil
}
