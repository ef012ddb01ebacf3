package charts

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// Release names a rendering: the release's name and namespace, as `helm install NAME -n NS`.
type Release struct {
	Name, Namespace string
}

// Rendered is what a chart renders to: its CRDs (crds/, which Helm installs but never upgrades)
// and the objects of its templates, in the order Helm would install them by kind.
type Rendered struct {
	CRDs    []*unstructured.Unstructured
	Objects []*unstructured.Unstructured
	// Notes is NOTES.txt rendered.
	Notes string
}

// Render renders ch with values (merged over the chart's values.yaml and checked against its
// values.schema.json) the way `helm template` does, without a cluster: templates that look up
// live objects see none.
func Render(ch *chartv2.Chart, rel Release, values map[string]any) (*Rendered, error) {
	return render(ch, rel, values, nil)
}

// RenderIn is Render against the cluster cfg points at, as `helm install` and `helm upgrade` do:
// templates that look up live objects see them (the hub chart keeps its webhook certificate so).
func RenderIn(cfg *rest.Config, ch *chartv2.Chart, rel Release, values map[string]any) (*Rendered, error) {
	return render(ch, rel, values, cfg)
}

func render(ch *chartv2.Chart, rel Release, values map[string]any, cfg *rest.Config) (*Rendered, error) {
	opts := common.ReleaseOptions{Name: rel.Name, Namespace: rel.Namespace, Revision: 1, IsInstall: true}
	vals, err := util.ToRenderValues(ch, values, opts, common.DefaultCapabilities)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", ch.Name(), err)
	}
	var out map[string]string
	if cfg != nil {
		out, err = engine.RenderWithClient(ch, vals, cfg)
	} else {
		out, err = engine.Render(ch, vals)
	}
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", ch.Name(), err)
	}
	r := &Rendered{}
	names := make([]string, 0, len(out))
	for name := range out {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if strings.HasSuffix(name, "NOTES.txt") {
			r.Notes = out[name]
			continue
		}
		objs, err := decode(name, []byte(out[name]))
		if err != nil {
			return nil, err
		}
		r.Objects = append(r.Objects, objs...)
	}
	sortByInstallOrder(r.Objects)
	for _, c := range ch.CRDObjects() {
		objs, err := decode(c.Filename, c.File.Data)
		if err != nil {
			return nil, err
		}
		r.CRDs = append(r.CRDs, objs...)
	}
	return r, nil
}

// decode reads the YAML documents of one rendered file, skipping empty ones.
func decode(name string, data []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	rd := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("%s: a document without apiVersion and kind", name)
		}
		objs = append(objs, u)
	}
}

// installOrder is the order in which Helm installs kinds (helm.sh/helm/v4/pkg/release's
// InstallOrder, abridged to what the charts hold); other kinds go last.
var installOrder = []string{
	"Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy", "PodDisruptionBudget",
	"ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass", "PersistentVolume",
	"PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole", "ClusterRoleList",
	"ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList",
	"Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
	"HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "APIService",
	"Issuer", "Certificate",
}

func sortByInstallOrder(objs []*unstructured.Unstructured) {
	rank := func(kind string) int {
		for i, k := range installOrder {
			if k == kind {
				return i
			}
		}
		return len(installOrder)
	}
	sort.SliceStable(objs, func(i, j int) bool { return rank(objs[i].GetKind()) < rank(objs[j].GetKind()) })
}
