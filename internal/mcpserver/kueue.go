package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kueueGroup is Kueue's API group, and kueueVersions its versions that serve Workloads, the
// newest first. Flotilla does not build Kueue's types into its reads here: whichever version the
// hub serves is read as unstructured.
const kueueGroup = "kueue.x-k8s.io"

var kueueVersions = []string{"v1beta2", "v1beta1"}

// KueueInput are kueue_workloads' arguments.
type KueueInput struct {
	Namespace     string `json:"namespace,omitempty" jsonschema:"namespace of the Workloads (default: the kubeconfig context's namespace)"`
	AllNamespaces bool   `json:"allNamespaces,omitempty" jsonschema:"list the Workloads of every namespace; namespace must then be left out"`
}

// KueueOutput is kueue_workloads' answer.
type KueueOutput struct {
	// Served says whether the hub serves Kueue's Workloads; when not, Message says so and how to
	// change it, and Workloads is empty.
	Served     bool       `json:"served" jsonschema:"whether the hub serves Kueue's Workloads (Kueue's CRDs are installed on the hub)"`
	APIVersion string     `json:"apiVersion,omitempty"`
	Message    string     `json:"message,omitempty"`
	Workloads  []Workload `json:"workloads"`
}

// Workload is one Kueue Workload on the hub.
type Workload struct {
	Namespace    string `json:"namespace"`
	Name         string `json:"name"`
	Queue        string `json:"queue,omitempty" jsonschema:"the LocalQueue (spec.queueName)"`
	ClusterQueue string `json:"clusterQueue,omitempty" jsonschema:"the ClusterQueue it reserved quota in (status.admission.clusterQueue)"`
	// QuotaReserved, Admitted, Finished and Evicted are the statuses of those conditions, "" when
	// absent.
	QuotaReserved string `json:"quotaReserved,omitempty"`
	Admitted      string `json:"admitted,omitempty"`
	Finished      string `json:"finished,omitempty"`
	Evicted       string `json:"evicted,omitempty"`
	// ClusterName is the MultiKueue worker it runs on (status.clusterName).
	ClusterName           string           `json:"clusterName,omitempty" jsonschema:"the MultiKueue worker cluster the workload runs on"`
	NominatedClusterNames []string         `json:"nominatedClusterNames,omitempty" jsonschema:"the worker clusters MultiKueue may dispatch it to"`
	AdmissionChecks       []AdmissionCheck `json:"admissionChecks"`
	PodSets               []PodSet         `json:"podSets"`
	AgeSeconds            *int64           `json:"ageSeconds,omitempty"`
	Message               string           `json:"message,omitempty" jsonschema:"the message of its latest condition"`
}

// AdmissionCheck is the state of one of a Workload's admission checks (MultiKueue's among them).
type AdmissionCheck struct {
	Name    string `json:"name"`
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
}

// PodSet is one of a Workload's pod sets.
type PodSet struct {
	Name  string `json:"name"`
	Count int64  `json:"count"`
}

func (s *server) addKueueTools(m *mcp.Server) {
	addTool(m, &mcp.Tool{Name: "kueue_workloads", Annotations: readOnly,
		Description: "List Kueue Workloads on the hub (batch jobs submitted to a LocalQueue there) with their queue, quota, admission " +
			"checks and the MultiKueue worker cluster each runs on. When the hub does not serve Kueue's API, says so (served: false)."}, s.kueueWorkloads)
}

func (s *server) kueueWorkloads(ctx context.Context, _ *mcp.CallToolRequest, in KueueInput) (*mcp.CallToolResult, KueueOutput, error) {
	opts, where, err := s.scope(in.Namespace, in.AllNamespaces, "workloads")
	if err != nil {
		return nil, KueueOutput{}, err
	}
	version, missing, err := s.kueueVersion()
	if err != nil {
		return nil, KueueOutput{}, err
	}
	if version == "" {
		return nil, KueueOutput{Served: false, Workloads: []Workload{}, Message: missing}, nil
	}
	gv := schema.GroupVersion{Group: kueueGroup, Version: version}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gv.WithKind("WorkloadList"))
	if err := s.Client.List(ctx, list, opts...); err != nil {
		return nil, KueueOutput{}, hubError(err, "listing Kueue workloads ("+gv.String()+") "+where, "")
	}
	return nil, KueueOutput{Served: true, APIVersion: gv.String(), Workloads: workloads(list.Items, s.Clock.Now())}, nil
}

// kueueVersion is the newest version of Kueue's group the hub serves Workloads at, or "" and why
// none is.
func (s *server) kueueVersion() (version, missing string, err error) {
	var seen []string
	for _, v := range kueueVersions {
		gv := schema.GroupVersion{Group: kueueGroup, Version: v}.String()
		l, err := s.Discovery.ServerResourcesForGroupVersion(gv)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return "", "", hubError(err, "discovering whether the hub serves "+gv, "")
		}
		seen = append(seen, gv)
		if slices.ContainsFunc(l.APIResources, func(r metav1.APIResource) bool { return r.Name == "workloads" }) {
			return v, "", nil
		}
	}
	if len(seen) > 0 {
		return "", fmt.Sprintf("the hub serves %v but no workloads in it: Kueue's Workload CRD is not installed on the hub", seen), nil
	}
	return "", fmt.Sprintf("Kueue is not installed on the hub: it serves no %s API (neither %v), so there are no Kueue Workloads to list. "+
		"Install Kueue's CRDs on the hub to submit jobs there (docs/kueue.md)", kueueGroup, kueueVersions), nil
}

// workloads describes Kueue Workloads read as unstructured, by namespace and name. Fields missing
// or of another type than Kueue's API gives them are left empty.
func workloads(items []unstructured.Unstructured, now time.Time) []Workload {
	out := make([]Workload, 0, len(items))
	for i := range items {
		u := items[i].Object
		w := Workload{Namespace: items[i].GetNamespace(), Name: items[i].GetName(), AdmissionChecks: []AdmissionCheck{}, PodSets: []PodSet{}}
		w.Queue, _, _ = unstructured.NestedString(u, "spec", "queueName")
		w.ClusterQueue, _, _ = unstructured.NestedString(u, "status", "admission", "clusterQueue")
		w.ClusterName, _, _ = unstructured.NestedString(u, "status", "clusterName")
		w.NominatedClusterNames, _, _ = unstructured.NestedStringSlice(u, "status", "nominatedClusterNames")
		conds, _, _ := unstructured.NestedSlice(u, "status", "conditions")
		var latest string
		var latestTime string
		for _, c := range conds {
			cm, ok := c.(map[string]any)
			if !ok {
				continue
			}
			typ, _ := cm["type"].(string)
			st, _ := cm["status"].(string)
			switch typ {
			case "QuotaReserved":
				w.QuotaReserved = st
			case "Admitted":
				w.Admitted = st
			case "Finished":
				w.Finished = st
			case "Evicted":
				w.Evicted = st
			}
			// RFC 3339 times in UTC order as strings.
			if t, _ := cm["lastTransitionTime"].(string); t >= latestTime {
				latestTime = t
				latest, _ = cm["message"].(string)
			}
		}
		w.Message = latest
		checks, _, _ := unstructured.NestedSlice(u, "status", "admissionChecks")
		for _, c := range checks {
			cm, ok := c.(map[string]any)
			if !ok {
				continue
			}
			ac := AdmissionCheck{}
			ac.Name, _ = cm["name"].(string)
			ac.State, _ = cm["state"].(string)
			ac.Message, _ = cm["message"].(string)
			w.AdmissionChecks = append(w.AdmissionChecks, ac)
		}
		podSets, _, _ := unstructured.NestedSlice(u, "spec", "podSets")
		for _, p := range podSets {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			ps := PodSet{}
			ps.Name, _ = pm["name"].(string)
			ps.Count = integer(pm["count"])
			w.PodSets = append(w.PodSets, ps)
		}
		ts := items[i].GetCreationTimestamp()
		w.AgeSeconds = secondsSince(&ts, now)
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// integer is v as a whole number: Kubernetes' JSON decoder gives int64, encoding/json float64.
// Anything else is 0.
func integer(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}
