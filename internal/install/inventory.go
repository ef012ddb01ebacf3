package install

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
)

// The inventory is what an install applied, kept in a ConfigMap of the release namespace so that
// the next install of another version removes what that version no longer renders (as Helm's
// release record does), and uninstall removes exactly what was installed.
const (
	inventorySuffix = "-inventory"
	inventoryKey    = "objects"
	versionKey      = "chartVersion"
)

// objectRef is one line of the inventory: apiVersion, kind, namespace and name.
type objectRef struct{ APIVersion, Kind, Namespace, Name string }

func (r objectRef) String() string {
	return strings.Join([]string{r.APIVersion, r.Kind, r.Namespace, r.Name}, " ")
}

func refOf(o *unstructured.Unstructured) objectRef {
	return objectRef{o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName()}
}

// object is the reference as an object carrying the release's labels, for Remove.
func (r objectRef) object(release string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(r.APIVersion)
	u.SetKind(r.Kind)
	u.SetNamespace(r.Namespace)
	u.SetName(r.Name)
	u.SetLabels(map[string]string{PartOfLabel: PartOf, InstanceLabel: release})
	return u
}

func parseInventory(data string) ([]objectRef, error) {
	var refs []objectRef
	for _, line := range strings.Split(data, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, " ")
		if len(f) != 4 {
			return nil, fmt.Errorf("inventory line %q: want apiVersion, kind, namespace and name", line)
		}
		refs = append(refs, objectRef{f[0], f[1], f[2], f[3]})
	}
	return refs, nil
}

// readInventory returns the objects the release's last install applied (nil when there is no
// inventory: a first install, or one made by Helm).
func readInventory(ctx context.Context, cs kubernetes.Interface, ns, release string) ([]objectRef, string, error) {
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, release+inventorySuffix, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading the install's inventory %s/%s: %w", ns, release+inventorySuffix, err)
	}
	if cm.Labels[PartOfLabel] != PartOf {
		return nil, "", fmt.Errorf("ConfigMap %s/%s is not Flotilla's (no label %s=%s): remove or rename it", ns, cm.Name, PartOfLabel, PartOf)
	}
	refs, err := parseInventory(cm.Data[inventoryKey])
	if err != nil {
		return nil, "", fmt.Errorf("ConfigMap %s/%s: %w", ns, cm.Name, err)
	}
	return refs, cm.Data[versionKey], nil
}

func writeInventory(ctx context.Context, cs kubernetes.Interface, ns, release, version string, objs []*unstructured.Unstructured) error {
	lines := make([]string, 0, len(objs))
	for _, o := range objs {
		lines = append(lines, refOf(o).String())
	}
	sort.Strings(lines)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: release + inventorySuffix, Namespace: ns,
			Labels: map[string]string{PartOfLabel: PartOf, InstanceLabel: release}},
		Data: map[string]string{inventoryKey: strings.Join(lines, "\n") + "\n", versionKey: version},
	}
	_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("writing the install's inventory %s/%s: %w", ns, cm.Name, err)
	}
	return nil
}

// stale lists what old holds and objs no longer render.
func stale(old []objectRef, objs []*unstructured.Unstructured, release string) []*unstructured.Unstructured {
	now := map[objectRef]bool{}
	for _, o := range objs {
		now[refOf(o)] = true
	}
	var out []*unstructured.Unstructured
	for _, r := range old {
		if !now[r] {
			out = append(out, r.object(release))
		}
	}
	return out
}
