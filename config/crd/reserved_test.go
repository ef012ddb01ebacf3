package crd

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

// The API server refuses the reserved cluster names by a CEL rule that lists them: it must list
// exactly the names the hub reserves.
func TestManagedClusterRuleListsTheReservedNames(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, c := range all {
		if c.Name != "managedclusters.cluster.open-cluster-management.io" {
			continue
		}
		for _, v := range c.Spec.Versions {
			for _, r := range v.Schema.OpenAPIV3Schema.XValidations {
				if strings.Contains(r.Rule, "self.metadata.name in") {
					rules = append(rules, r.Rule)
				}
			}
		}
	}
	quoted := make([]string, len(clusteridentity.ReservedClusterNames))
	for i, n := range clusteridentity.ReservedClusterNames {
		quoted[i] = fmt.Sprintf("'%s'", n)
	}
	want := []string{"oldSelf.hasValue() || !(self.metadata.name in [" + strings.Join(quoted, ", ") + "])"}
	if diff := cmp.Diff(want, slices.Compact(rules)); diff != "" {
		t.Errorf("the ManagedCluster CRD's rule on reserved names (-want +got):\n%s\nchange the marker in api/cluster/v1 and run make generate", diff)
	}
}
