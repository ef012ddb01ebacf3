package builtin

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// GetOrCreateOwn reads into obj the object named key on the hub, or creates it (with nothing but
// its name and the label builtinaddon.Label=addOn) when there is none. It refuses an object the
// add-on did not create: one without that label is someone else's, and the error says so, and
// fix says what the user can do about it. Built-in add-ons write only what this returns.
func GetOrCreateOwn(ctx context.Context, hub client.Client, key client.ObjectKey, obj client.Object, addOn, fix string) error {
	kind := reflect.TypeOf(obj).Elem().Name()
	err := hub.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		obj.SetNamespace(key.Namespace)
		obj.SetName(key.Name)
		obj.SetLabels(map[string]string{builtinaddon.Label: addOn})
		if err := hub.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %s %s: %w", kind, key, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s %s: %w", kind, key, err)
	}
	if obj.GetLabels()[builtinaddon.Label] != addOn {
		return fmt.Errorf("%s %s exists and was not written by the built-in add-on %s (no label %s=%s): "+
			"the add-on neither takes it over nor deletes it; %s", kind, key, addOn, builtinaddon.Label, addOn, fix)
	}
	return nil
}
