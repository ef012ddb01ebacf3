package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

func TestFieldsRead(t *testing.T) {
	prio := func(t clusterv1beta1.ScoreCoordinateType, builtIn string) clusterv1beta1.PrioritizerConfig {
		sc := &clusterv1beta1.ScoreCoordinate{Type: t, BuiltIn: builtIn}
		if t == clusterv1beta1.ScoreCoordinateTypeAddOn {
			sc.AddOn = &clusterv1beta1.AddOnScore{ResourceName: "demo", ScoreName: "demo"}
		}
		return clusterv1beta1.PrioritizerConfig{ScoreCoordinate: sc}
	}
	cases := map[string]struct {
		annotations map[string]string
		spec        clusterv1beta1.PlacementSpec
		want        ClusterFields
	}{
		"nothing but sets": {},
		"OCM's benchmark placement: AddOn, CPU, Balance": {spec: clusterv1beta1.PlacementSpec{PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{
			Configurations: []clusterv1beta1.PrioritizerConfig{prio(clusterv1beta1.ScoreCoordinateTypeAddOn, ""),
				prio(clusterv1beta1.ScoreCoordinateTypeBuiltIn, clusterv1beta1.PrioritizerResourceAllocatableCPU),
				prio(clusterv1beta1.ScoreCoordinateTypeBuiltIn, clusterv1beta1.PrioritizerBalance)}}},
			want: FieldAllocatable},
		"an unknown prioritizer reads everything": {spec: clusterv1beta1.PlacementSpec{PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{
			Configurations: []clusterv1beta1.PrioritizerConfig{prio(clusterv1beta1.ScoreCoordinateTypeBuiltIn, "Mystery")}}}, want: AllFields | FieldResourceUsage},
		"the GPU annotation reads the ResourceUsage": {annotations: map[string]string{"placement.flotilla.io/gpu": "total=8"}, want: FieldResourceUsage},
		"GPUFree and GPUBinPack read the ResourceUsage": {spec: clusterv1beta1.PlacementSpec{PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{
			Configurations: []clusterv1beta1.PrioritizerConfig{prio(clusterv1beta1.ScoreCoordinateTypeBuiltIn, "GPUFree"),
				prio(clusterv1beta1.ScoreCoordinateTypeBuiltIn, "GPUBinPack")}}}, want: FieldResourceUsage},
		"a CEL GPU function reads the ResourceUsage too": {spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: []string{"true", `managedCluster.gpuFit ("", 8, 1)`}}}}}}, want: AllFields | FieldResourceUsage},
		"label predicate": {spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: metav1.LabelSelectorOpExists}}}}}}},
			want: FieldLabels},
		"claim predicate": {spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: metav1.LabelSelectorOpExists}}}}}}},
			want: FieldClaims},
		"CEL reads everything": {spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: []string{"true"}}}}}}, want: AllFields},
		"spread by claim, groups by label": {spec: clusterv1beta1.PlacementSpec{
			SpreadPolicy: clusterv1beta1.SpreadPolicy{SpreadConstraints: []clusterv1beta1.SpreadConstraintsTerm{{TopologyKey: "zone", TopologyKeyType: clusterv1beta1.TopologyKeyTypeClaim}}},
			DecisionStrategy: clusterv1beta1.DecisionStrategy{GroupStrategy: clusterv1beta1.GroupStrategy{DecisionGroups: []clusterv1beta1.DecisionGroup{{
				GroupName: "canary", GroupClusterSelector: clusterv1beta1.GroupClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}}}}}}},
			want: FieldLabels | FieldClaims},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, FieldsRead(&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}, Spec: tc.spec})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
