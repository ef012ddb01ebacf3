package addontemplate

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/addon"
)

// allowedTemplate reads the AddOnTemplate that ref (the desired AddOnTemplate in mca's
// status.configReferences) names, once it has checked that the hub may act on it: every
// configuration in status.configReferences is one the hub chose for this add-on on this cluster
// (addon.AllowedConfigs: worked out from the ClusterManagementAddOn, the placements and mca's
// spec, never from its status, which the cluster's agent may write), and the template is for
// this add-on (spec.addonName). Otherwise refusal says why, naming the field and the fix, and
// tmpl is nil. A template that does not exist is neither (nil, "", nil).
func allowedTemplate(ctx context.Context, c client.Reader, mca *addonv1alpha1.ManagedClusterAddOn, ref *addonv1alpha1.ConfigSpecHash) (tmpl *addonv1alpha1.AddOnTemplate, refusal string, err error) {
	allowed, err := addon.AllowedConfigs(ctx, c, mca)
	if err != nil {
		return nil, "", err
	}
	if err := allowed.Check(mca); err != nil {
		return nil, err.Error(), nil
	}
	tmpl = &addonv1alpha1.AddOnTemplate{}
	if err := c.Get(ctx, client.ObjectKey{Name: ref.Name}, tmpl); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", nil
		}
		return nil, "", err
	}
	if tmpl.Spec.AddonName != mca.Name {
		return nil, fmt.Sprintf("AddOnTemplate %s is for add-on %q (its spec.addonName), not for %s: the hub deploys an add-on only from a template for it; "+
			"name a template whose spec.addonName is %q in ClusterManagementAddOn %s or in ManagedClusterAddOn %s/%s spec.configs",
			tmpl.Name, tmpl.Spec.AddonName, mca.Name, mca.Name, mca.Name, mca.Namespace, mca.Name), nil
	}
	return tmpl, "", nil
}
