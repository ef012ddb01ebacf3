package fleetview

import (
	"sort"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Works is list_manifestworks' answer.
type Works struct {
	// Clusters sum up the works per cluster.
	Clusters []ClusterWorks `json:"clusters"`
	Works    []Work         `json:"works"`
}

// ClusterWorks counts a cluster's works by state.
type ClusterWorks struct {
	Cluster   string `json:"cluster"`
	Works     int    `json:"works"`
	Applied   int    `json:"applied" jsonschema:"works whose Applied condition is True"`
	Available int    `json:"available" jsonschema:"works whose Available condition is True"`
	Degraded  int    `json:"degraded" jsonschema:"works whose Degraded condition is True"`
	// Unreported works have no Applied condition yet: the cluster's agent has not reported.
	Unreported int `json:"unreported" jsonschema:"works the cluster's agent has not reported on yet"`
}

// Work is one ManifestWork.
type Work struct {
	Cluster   string `json:"cluster"`
	Name      string `json:"name"`
	Manifests int    `json:"manifests"`
	Applied   string `json:"applied" jsonschema:"the Applied condition: True, False or Unknown (not reported yet)"`
	Available string `json:"available" jsonschema:"the Available condition: True, False or Unknown (not reported yet)"`
	Degraded  string `json:"degraded,omitempty"`
	Complete  string `json:"complete,omitempty" jsonschema:"the Complete condition, which only condition rules set"`
	// ManifestsApplied and ManifestsAvailable count the manifests whose condition is True.
	ManifestsApplied   int    `json:"manifestsApplied"`
	ManifestsAvailable int    `json:"manifestsAvailable"`
	ReplicaSet         string `json:"replicaSet,omitempty" jsonschema:"the ManifestWorkReplicaSet that made the work, as NAMESPACE/NAME"`
	// Problems are the messages of the work's conditions that are not as they should be.
	Problems []string `json:"problems,omitempty"`
}

// WorkReport describes works, ordered by cluster and name, and counts them per cluster.
func WorkReport(works []workv1.ManifestWork) Works {
	out := Works{Clusters: []ClusterWorks{}, Works: make([]Work, 0, len(works))}
	byCluster := map[string]*ClusterWorks{}
	for i := range works {
		mw := &works[i]
		conds := mw.Status.Conditions
		w := Work{Cluster: mw.Namespace, Name: mw.Name, Manifests: len(mw.Spec.Workload.Manifests),
			Applied: ConditionStatus(conds, workv1.WorkApplied), Available: ConditionStatus(conds, workv1.WorkAvailable),
			Degraded: optionalStatus(conds, workv1.WorkDegraded), Complete: optionalStatus(conds, workv1.WorkComplete),
			ReplicaSet: WorkReplicaSet(mw.Labels)}
		for _, mc := range mw.Status.ResourceStatus.Manifests {
			if meta.IsStatusConditionTrue(mc.Conditions, workv1.ManifestApplied) {
				w.ManifestsApplied++
			}
			if meta.IsStatusConditionTrue(mc.Conditions, workv1.ManifestAvailable) {
				w.ManifestsAvailable++
			}
		}
		for _, c := range conds {
			bad := (c.Type == workv1.WorkDegraded && c.Status == metav1.ConditionTrue) ||
				((c.Type == workv1.WorkApplied || c.Type == workv1.WorkAvailable) && c.Status != metav1.ConditionTrue)
			if bad && c.Message != "" {
				w.Problems = append(w.Problems, c.Type+": "+c.Message)
			}
		}
		out.Works = append(out.Works, w)
		cw := byCluster[w.Cluster]
		if cw == nil {
			cw = &ClusterWorks{Cluster: w.Cluster}
			byCluster[w.Cluster] = cw
		}
		cw.Works++
		switch {
		case meta.FindStatusCondition(conds, workv1.WorkApplied) == nil:
			cw.Unreported++
		case w.Applied == string(metav1.ConditionTrue):
			cw.Applied++
		}
		if w.Available == string(metav1.ConditionTrue) {
			cw.Available++
		}
		if w.Degraded == string(metav1.ConditionTrue) {
			cw.Degraded++
		}
	}
	sort.Slice(out.Works, func(i, j int) bool {
		if out.Works[i].Cluster != out.Works[j].Cluster {
			return out.Works[i].Cluster < out.Works[j].Cluster
		}
		return out.Works[i].Name < out.Works[j].Name
	})
	for _, cw := range byCluster {
		out.Clusters = append(out.Clusters, *cw)
	}
	sort.Slice(out.Clusters, func(i, j int) bool { return out.Clusters[i].Cluster < out.Clusters[j].Cluster })
	return out
}

// optionalStatus is the status of a condition only some objects have, "" when absent.
func optionalStatus(conds []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return string(c.Status)
	}
	return ""
}
