package dashboard

import (
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
)

// AddOnRow is one add-on on one cluster (a ManagedClusterAddOn in the cluster's namespace).
type AddOnRow struct {
	Cluster          string `json:"cluster"`
	Name             string `json:"name"`
	InstallNamespace string `json:"installNamespace,omitempty"`
	// Available, Degraded and Progressing are those conditions' statuses ("Unknown" when absent
	// for Available, "" for the others).
	Available   string `json:"available"`
	Degraded    string `json:"degraded,omitempty"`
	Progressing string `json:"progressing,omitempty"`
	// Health is how the hub checks the add-on's health: Lease or Customized.
	Health  string   `json:"health,omitempty"`
	Message string   `json:"message,omitempty"`
	Configs []string `json:"configs"`
}

func (s *Server) addons(w http.ResponseWriter, r *http.Request) {
	q, c, ok := s.begin(w, r, "limit", "continue", "namespace")
	if !ok {
		return
	}
	opts, where := listOptions(q)
	var list addonv1alpha1.ManagedClusterAddOnList
	if err := c.List(ctx(r), &list, opts...); err != nil {
		writeError(w, hubError(err, "listing managedclusteraddons "+where))
		return
	}
	rows := make([]AddOnRow, 0, len(list.Items))
	for _, a := range list.Items {
		conds := a.Status.Conditions
		row := AddOnRow{Cluster: a.Namespace, Name: a.Name, InstallNamespace: a.Spec.InstallNamespace,
			Available:   fleetview.ConditionStatus(conds, addonv1alpha1.ManagedClusterAddOnConditionAvailable),
			Degraded:    optional(conds, addonv1alpha1.ManagedClusterAddOnConditionDegraded),
			Progressing: optional(conds, addonv1alpha1.ManagedClusterAddOnConditionProgressing),
			Health:      string(a.Status.HealthCheck.Mode), Configs: []string{}}
		if av := meta.FindStatusCondition(conds, addonv1alpha1.ManagedClusterAddOnConditionAvailable); av != nil {
			row.Message = av.Message
		}
		for _, cr := range a.Status.ConfigReferences {
			ref := cr.Resource
			if cr.Group != "" {
				ref += "." + cr.Group
			}
			name := cr.Name
			if cr.Namespace != "" {
				name = cr.Namespace + "/" + name
			}
			row.Configs = append(row.Configs, ref+" "+name)
		}
		rows = append(rows, row)
	}
	listAnswer(w, Page[AddOnRow]{Items: rows, Continue: list.Continue, Remaining: list.RemainingItemCount}, nil)
}

// optional is the status of a condition only some objects have, "" when absent.
func optional(conds []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return string(c.Status)
	}
	return ""
}
