package install

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"

	"github.com/flotilla/flotilla/internal/contract/wellknown"
)

// PartOfLabel marks every object the charts render; Remove deletes nothing without it.
const PartOfLabel = wellknown.PartOfLabel

// PartOf is PartOfLabel's value on Flotilla's objects.
const PartOf = wellknown.PartOf

// InstanceLabel names the release (the install) an object belongs to.
const InstanceLabel = "app.kubernetes.io/instance"

// Objects applies objs, in order, to the cluster cfg points at with server-side apply under
// FieldManager (forcing conflicts: these fields are Flotilla's), with the API server's strict
// field validation, so that an object that does not match the cluster's OpenAPI schema fails
// naming the field. With dryRun nothing is changed. out, when not nil, gets a line per object.
func Objects(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured, dryRun bool, out io.Writer) error {
	dyn, mapper, err := clients(cfg)
	if err != nil {
		return err
	}
	for _, o := range objs {
		ri, err := resource(dyn, mapper, o)
		if err != nil {
			return err
		}
		data, err := json.Marshal(o.Object)
		if err != nil {
			return err
		}
		po := metav1.PatchOptions{FieldManager: FieldManager, Force: ptr.To(true), FieldValidation: "Strict"}
		if dryRun {
			po.DryRun = []string{metav1.DryRunAll}
		}
		if _, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data, po); err != nil {
			return fmt.Errorf("applying %s %s: %w", o.GetKind(), objectName(o), err)
		}
		if out != nil {
			verb := "applied"
			if dryRun {
				verb = "valid (dry run)"
			}
			_, _ = fmt.Fprintf(out, "%s %s %s\n", o.GetKind(), objectName(o), verb)
		}
	}
	return nil
}

// Remove deletes objs in reverse order, each only when the live object carries PartOfLabel and
// the same InstanceLabel as the rendered one: an object Flotilla did not install, even with the
// same name, is left alone and reported. It returns the objects it left alone.
func Remove(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured, out io.Writer) (kept []string, err error) {
	return remove(ctx, cfg, objs, true, out)
}

// RemoveLabeled is Remove for objects Flotilla made outside a chart (no release): each is
// deleted only when it carries PartOfLabel.
func RemoveLabeled(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured, out io.Writer) (kept []string, err error) {
	return remove(ctx, cfg, objs, false, out)
}

func remove(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured, sameRelease bool, out io.Writer) (kept []string, err error) {
	dyn, mapper, err := clients(cfg)
	if err != nil {
		return nil, err
	}
	for i := len(objs) - 1; i >= 0; i-- {
		o := objs[i]
		if sameRelease && o.GetKind() == "Namespace" && o.GetAPIVersion() == "v1" {
			// A namespace outlives the release, as the release's own does (and Helm keeps the
			// chart's, helm.sh/resource-policy: keep): what others put in it goes with it otherwise.
			kept = append(kept, "Namespace "+o.GetName())
			if out != nil {
				_, _ = fmt.Fprintf(out, "Namespace %s kept: namespaces outlive the release\n", o.GetName())
			}
			continue
		}
		ri, err := resource(dyn, mapper, o)
		if meta.IsNoMatchError(err) {
			continue // the kind is gone: so is the object
		}
		if err != nil {
			return kept, err
		}
		live, err := ri.Get(ctx, o.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return kept, fmt.Errorf("reading %s %s: %w", o.GetKind(), objectName(o), err)
		}
		l := live.GetLabels()
		if l[PartOfLabel] != PartOf || (sameRelease && l[InstanceLabel] != o.GetLabels()[InstanceLabel]) {
			kept = append(kept, o.GetKind()+" "+objectName(o))
			if out != nil {
				_, _ = fmt.Fprintf(out, "%s %s kept: Flotilla did not install it (no label %s=%s, %s=%s)\n",
					o.GetKind(), objectName(o), PartOfLabel, PartOf, InstanceLabel, o.GetLabels()[InstanceLabel])
			}
			continue
		}
		err = ri.Delete(ctx, o.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(live.GetUID())}})
		if err != nil && !apierrors.IsNotFound(err) {
			return kept, fmt.Errorf("deleting %s %s: %w", o.GetKind(), objectName(o), err)
		}
		if out != nil {
			_, _ = fmt.Fprintf(out, "%s %s deleted\n", o.GetKind(), objectName(o))
		}
	}
	return kept, nil
}

func clients(cfg *rest.Config) (*dynamic.DynamicClient, meta.RESTMapper, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return dyn, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)), nil
}

func resource(dyn dynamic.Interface, mapper meta.RESTMapper, o *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := o.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("%s %s: the cluster does not serve %s: %w", o.GetKind(), objectName(o), gvk, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return dyn.Resource(m.Resource).Namespace(o.GetNamespace()), nil
	}
	return dyn.Resource(m.Resource), nil
}

func objectName(o *unstructured.Unstructured) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns + "/" + o.GetName()
	}
	return o.GetName()
}
