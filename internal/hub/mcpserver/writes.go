package mcpserver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

// PatchPlacementInput are patch_placement's arguments.
type PatchPlacementInput struct {
	Namespace string `json:"namespace,omitempty" jsonschema:"namespace of the placement (default: the kubeconfig context's namespace)"`
	Name      string `json:"name" jsonschema:"name of the placement"`
	// NumberOfClusters sets spec.numberOfClusters.
	NumberOfClusters *int32 `json:"numberOfClusters,omitempty" jsonschema:"set spec.numberOfClusters: how many clusters to select"`
	// Predicates replace spec.predicates.
	Predicates []map[string]any `json:"predicates,omitempty" jsonschema:"replace spec.predicates with these ClusterPredicates, each {requiredClusterSelector: {labelSelector, claimSelector, celSelector}}; an empty list removes every predicate"`
	// PrioritizerPolicy replaces spec.prioritizerPolicy.
	PrioritizerPolicy map[string]any `json:"prioritizerPolicy,omitempty" jsonschema:"replace spec.prioritizerPolicy: {mode: Additive|Exact, configurations: [{scoreCoordinate: {type: BuiltIn|AddOn, builtIn, addOn: {resourceName, scoreName}}, weight}]}"`
	DryRun            bool           `json:"dryRun,omitempty" jsonschema:"have the hub validate the change without saving it"`
}

// PatchPlacementOutput is patch_placement's answer.
type PatchPlacementOutput struct {
	Namespace  string         `json:"namespace"`
	Name       string         `json:"name"`
	DryRun     bool           `json:"dryRun"`
	Generation int64          `json:"generation" jsonschema:"the placement's metadata.generation after the change"`
	Spec       map[string]any `json:"spec" jsonschema:"the placement's spec after the change"`
	Next       string         `json:"next"`
}

// ScoreInput are set_addon_placement_score's arguments.
type ScoreInput struct {
	Cluster string       `json:"cluster" jsonschema:"the managed cluster the scores are for (the score lives in the namespace named after it)"`
	Name    string       `json:"name" jsonschema:"name of the AddOnPlacementScore; placements rank by it with prioritizerPolicy addOn.resourceName"`
	Scores  []ScoreValue `json:"scores" jsonschema:"the scores, replacing those the object holds"`
	// ValidForSeconds sets status.validUntil.
	ValidForSeconds *int64 `json:"validForSeconds,omitempty" jsonschema:"how long the scores hold, in seconds; placements ignore expired scores (default: no expiry)"`
}

// ScoreValue is one named score.
type ScoreValue struct {
	Name  string `json:"name" jsonschema:"the score's name; placements rank by it with prioritizerPolicy addOn.scoreName"`
	Value int32  `json:"value" jsonschema:"the score, from -100 to 100"`
}

// ScoreOutput is set_addon_placement_score's answer.
type ScoreOutput struct {
	Cluster    string       `json:"cluster"`
	Name       string       `json:"name"`
	Created    bool         `json:"created" jsonschema:"the AddOnPlacementScore did not exist and was created"`
	Scores     []ScoreValue `json:"scores"`
	ValidUntil string       `json:"validUntil,omitempty"`
}

// writeAnnotations mark a tool that changes the hub.
var writeAnnotations = &mcp.ToolAnnotations{DestructiveHint: ptrTo(false), IdempotentHint: true, OpenWorldHint: ptrTo(false)}

func (s *server) addWriteTools(m *mcp.Server) {
	addTool(m, &mcp.Tool{Name: "patch_placement", Annotations: writeAnnotations,
		Description: "Change a Placement's spec: numberOfClusters, predicates (replaced) or prioritizerPolicy (replaced). The hub validates " +
			"the change and refuses a bad one with a message naming the field; dryRun validates without saving. Then call " +
			"explain_placement to see the new decisions."}, s.patchPlacement)
	addTool(m, &mcp.Tool{Name: "set_addon_placement_score", Annotations: writeAnnotations,
		Description: "Create or update the AddOnPlacementScore of a cluster: its status scores (replaced), which placements rank by " +
			"with an AddOn prioritizer, and how long they hold."}, s.setScore)
}

// placementPatch is the JSON patch (RFC 6902) of spec that in asks for. Each field given is
// replaced whole ("add" replaces a member that exists): a JSON merge patch would merge the new
// prioritizer policy into the old one. It is an error naming the arguments when in asks for no
// change.
func placementPatch(in PatchPlacementInput) ([]byte, error) {
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	var ops []op
	if in.NumberOfClusters != nil {
		ops = append(ops, op{"add", "/spec/numberOfClusters", *in.NumberOfClusters})
	}
	if in.Predicates != nil {
		ops = append(ops, op{"add", "/spec/predicates", in.Predicates})
	}
	if in.PrioritizerPolicy != nil {
		ops = append(ops, op{"add", "/spec/prioritizerPolicy", in.PrioritizerPolicy})
	}
	if len(ops) == 0 {
		return nil, argError("numberOfClusters", "patch_placement needs a change: give numberOfClusters, predicates or prioritizerPolicy")
	}
	return json.Marshal(ops)
}

func (s *server) patchPlacement(ctx context.Context, _ *mcp.CallToolRequest, in PatchPlacementInput) (*mcp.CallToolResult, PatchPlacementOutput, error) {
	if err := checkNamespace("namespace", in.Namespace); err != nil {
		return nil, PatchPlacementOutput{}, err
	}
	if err := checkName("name", in.Name, true); err != nil {
		return nil, PatchPlacementOutput{}, err
	}
	patch, err := placementPatch(in)
	if err != nil {
		return nil, PatchPlacementOutput{}, err
	}
	ns := s.namespaceOf(in.Namespace)
	p := &clusterv1beta1.Placement{}
	if err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: in.Name}, p); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, PatchPlacementOutput{}, argError("name", "no placement %q in namespace %s: list them with list_placements (namespace %q)", in.Name, ns, ns)
		}
		return nil, PatchPlacementOutput{}, hubError(err, "reading placement "+ns+"/"+in.Name, "")
	}
	opts := []client.PatchOption{client.FieldValidation(metav1.FieldValidationStrict)}
	if in.DryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := s.Client.Patch(ctx, p, client.RawPatch(types.JSONPatchType, patch), opts...); err != nil {
		return nil, PatchPlacementOutput{}, hubError(err, "patching placement "+ns+"/"+in.Name, "")
	}
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&p.Spec)
	if err != nil {
		return nil, PatchPlacementOutput{}, err
	}
	next := "call explain_placement to see the decisions the hub makes now"
	if in.DryRun {
		next = "the hub accepts the change; call again without dryRun to make it"
	}
	return nil, PatchPlacementOutput{Namespace: ns, Name: in.Name, DryRun: in.DryRun, Generation: p.Generation, Spec: spec, Next: next}, nil
}

func (s *server) setScore(ctx context.Context, _ *mcp.CallToolRequest, in ScoreInput) (*mcp.CallToolResult, ScoreOutput, error) {
	if err := checkNamespace("cluster", in.Cluster); err != nil {
		return nil, ScoreOutput{}, err
	}
	if in.Cluster == "" {
		return nil, ScoreOutput{}, argError("cluster", "is required: give the managed cluster the scores are for")
	}
	if err := checkName("name", in.Name, true); err != nil {
		return nil, ScoreOutput{}, err
	}
	if err := checkScores(in.Scores); err != nil {
		return nil, ScoreOutput{}, err
	}
	if in.ValidForSeconds != nil && *in.ValidForSeconds <= 0 {
		return nil, ScoreOutput{}, argError("validForSeconds", "is %d: give a positive number of seconds, or leave it out for scores that do not expire", *in.ValidForSeconds)
	}
	key := client.ObjectKey{Namespace: in.Cluster, Name: in.Name}
	score := &clusterv1alpha1.AddOnPlacementScore{}
	created := false
	err := s.Client.Get(ctx, key, score)
	switch {
	case apierrors.IsNotFound(err):
		score = &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: in.Cluster, Name: in.Name}}
		if err := s.Client.Create(ctx, score); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, ScoreOutput{}, argError("cluster", "the hub has no namespace %q, so %q is not an accepted cluster: list them with list_clusters", in.Cluster, in.Cluster)
			}
			return nil, ScoreOutput{}, hubError(err, "creating addonplacementscore "+in.Cluster+"/"+in.Name, "")
		}
		created = true
	case err != nil:
		return nil, ScoreOutput{}, hubError(err, "reading addonplacementscore "+in.Cluster+"/"+in.Name, "")
	}
	score.Status.Scores = make([]clusterv1alpha1.AddOnPlacementScoreItem, len(in.Scores))
	for i, v := range in.Scores {
		score.Status.Scores[i] = clusterv1alpha1.AddOnPlacementScoreItem{Name: v.Name, Value: v.Value}
	}
	score.Status.ValidUntil = nil
	out := ScoreOutput{Cluster: in.Cluster, Name: in.Name, Created: created, Scores: in.Scores}
	if in.ValidForSeconds != nil {
		until := metav1.NewTime(s.Clock.Now().Add(time.Duration(*in.ValidForSeconds) * time.Second).Truncate(time.Second))
		score.Status.ValidUntil = &until
		out.ValidUntil = until.UTC().Format(time.RFC3339)
	}
	if err := s.Client.Status().Update(ctx, score); err != nil {
		return nil, ScoreOutput{}, hubError(err, "writing the scores of addonplacementscore "+in.Cluster+"/"+in.Name, "")
	}
	return nil, out, nil
}

// checkScores checks scores as the API does, before anything is created: names given and unique,
// values in [MinScore, MaxScore].
func checkScores(scores []ScoreValue) error {
	if len(scores) == 0 {
		return argError("scores", "is empty: give at least one {name, value}")
	}
	seen := map[string]bool{}
	for i, v := range scores {
		switch {
		case v.Name == "":
			return argError("scores", "entry %d has no name: name each score, such as gpuClusterAvailable", i)
		case seen[v.Name]:
			return argError("scores", "name %q is given twice: give each score once", v.Name)
		case v.Value < clusterv1alpha1.MinScore || v.Value > clusterv1alpha1.MaxScore:
			return argError("scores", "%q has value %d: scores range from %d to %d", v.Name, v.Value, clusterv1alpha1.MinScore, clusterv1alpha1.MaxScore)
		}
		seen[v.Name] = true
	}
	return nil
}
