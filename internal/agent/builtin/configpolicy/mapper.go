package configpolicy

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/restmapper"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

// resettingMapper reads discovery again when a kind is not found: a CRD installed after the
// add-on started is then found on the next evaluation.
type resettingMapper struct {
	*restmapper.DeferredDiscoveryRESTMapper
}

func (m resettingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	mapping, err := m.DeferredDiscoveryRESTMapper.RESTMapping(gk, versions...)
	if meta.IsNoMatchError(err) {
		m.Reset()
		mapping, err = m.DeferredDiscoveryRESTMapper.RESTMapping(gk, versions...)
	}
	return mapping, err
}

// deleteRelated deletes a related object, if it is still the one recorded (its UID).
func (e *engine) deleteRelated(ctx context.Context, ro policyv1.RelatedObject) error {
	gv, err := schema.ParseGroupVersion(ro.Object.APIVersion)
	if err != nil {
		return err
	}
	mapping, err := e.mapper.RESTMapping(gv.WithKind(ro.Object.Kind).GroupKind(), gv.Version)
	if err != nil {
		return nil //nolint:nilerr // the kind is no longer served: nothing of it is left to delete
	}
	c := (&check{e: e, res: mapping.Resource}).client(ro.Object.Metadata.Namespace)
	uid := types.UID(ro.Properties.UID)
	err = c.Delete(ctx, ro.Object.Metadata.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err = client404(err); err != nil && !isConflict(err) {
		return fmt.Errorf("deleting %s %s: %w", mapping.Resource.Resource, ro.Object.Metadata.Name, err)
	}
	return nil
}

func ignoreNoKind(err error) error {
	if meta.IsNoMatchError(err) {
		return nil
	}
	return err
}
