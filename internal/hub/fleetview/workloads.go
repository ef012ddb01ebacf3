package fleetview

import (
	"encoding/json"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

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
	// LastTransitionTime is when State last changed (RFC 3339), "" when not given.
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
}

// PodSet is one of a Workload's pod sets.
type PodSet struct {
	Name  string `json:"name"`
	Count int64  `json:"count"`
}

// Workloads describes Kueue Workloads read as unstructured, by namespace and name. Fields missing
// or of another type than Kueue's API gives them are left empty.
func Workloads(items []unstructured.Unstructured, now time.Time) []Workload {
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
			ac.LastTransitionTime, _ = cm["lastTransitionTime"].(string)
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
		w.AgeSeconds = SecondsSince(&ts, now)
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
