package predicate

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

// CostLimit bounds the runtime cost of one CEL expression on one cluster, as the Kubernetes API
// server bounds its validation rules; an expression that exceeds it does not match the cluster.
const CostLimit = 1_000_000

// celExpr is one compiled expression of a predicate's celSelector.
type celExpr struct {
	index int
	src   string
	prg   cel.Program
}

// ResourceUsageFunctions are the CEL member functions on managedCluster that read the
// cluster's ResourceUsage (scheduler.FieldsRead looks for them).
var ResourceUsageFunctions = []string{"freeGPUs", "nodesWithFreeGPUs", "gpuFit", "nodesWithFree"}

// newCELEnv declares the variable managedCluster (the ManagedCluster as a map, as OCM does) and
// the member function managedCluster.scores(name), which returns the status.scores of the
// AddOnPlacementScore of that name in the cluster's namespace as a list of {name, value}, and
// adds cel-go's string, list, set and math extensions. OCM also offers the Kubernetes CEL
// libraries and its version and quantity helpers; expressions that use them do not compile here
// yet, and are reported as such. The GPU functions (gpuFunctions) read the cluster's
// ResourceUsage.
func newCELEnv(h framework.Handle) (*cel.Env, error) {
	scores := func(cluster, name ref.Val) ref.Val {
		n, ok := name.Value().(string)
		if !ok {
			return types.NewErr("scores: the argument must be a string")
		}
		clusterName := clusterNameOf(cluster)
		s := h.AddOnPlacementScore(clusterName, n)
		if s == nil {
			// As OCM: a missing AddOnPlacementScore is an evaluation error, so the cluster does
			// not match whatever the expression says.
			return types.NewErr("no AddOnPlacementScore %s/%s", clusterName, n)
		}
		items := make([]any, 0, len(s.Status.Scores))
		for _, it := range s.Status.Scores {
			items = append(items, map[string]any{"name": it.Name, "value": int64(it.Value)})
		}
		return types.DefaultTypeAdapter.NativeToValue(items)
	}
	opts := []cel.EnvOption{
		ext.Strings(), ext.Lists(), ext.Sets(), ext.Math(),
		cel.Variable("managedCluster", cel.MapType(cel.StringType, cel.DynType)),
		cel.Function("scores", cel.MemberOverload("managedcluster_scores_string",
			[]*cel.Type{cel.MapType(cel.StringType, cel.DynType), cel.StringType}, cel.ListType(cel.DynType),
			cel.BinaryBinding(scores))),
	}
	return cel.NewEnv(append(opts, gpuFunctions(h)...)...)
}

// clusterNameOf is managedCluster.metadata.name, "" when absent.
func clusterNameOf(cluster ref.Val) string {
	if m, ok := cluster.(traits.Mapper); ok {
		if meta, found := m.Find(types.String("metadata")); found {
			if mm, ok := meta.(traits.Mapper); ok {
				if v, found := mm.Find(types.String("name")); found {
					s, _ := v.Value().(string)
					return s
				}
			}
		}
	}
	return ""
}

// compileCEL compiles the expressions; field is the celExpressions path.
func compileCEL(env *cel.Env, field string, exprs []string) ([]celExpr, error) {
	out := make([]celExpr, 0, len(exprs))
	for j, src := range exprs {
		f := fmt.Sprintf("%s[%d]", field, j)
		ast, iss := env.Compile(src)
		if iss.Err() != nil {
			return nil, &framework.ConfigError{Field: f, Message: fmt.Sprintf("invalid CEL expression %q: %v", src, iss.Err())}
		}
		if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
			return nil, &framework.ConfigError{Field: f, Message: fmt.Sprintf("CEL expression %q gives %s; it must give a bool", src, ast.OutputType())}
		}
		prg, err := env.Program(ast, cel.CostLimit(CostLimit))
		if err != nil {
			return nil, &framework.ConfigError{Field: f, Message: fmt.Sprintf("CEL expression %q: %v", src, err)}
		}
		out = append(out, celExpr{index: j, src: src, prg: prg})
	}
	return out, nil
}

// activation gives a cluster to CEL, asking the handle for its unstructured form (converted
// once per snapshot) when a CEL expression first needs it.
type activation struct {
	h       framework.Handle
	cluster *clusterv1.ManagedCluster
	vars    map[string]any
	err     error
}

func (a *activation) get() (map[string]any, error) {
	if a.vars == nil && a.err == nil {
		var m map[string]any
		if a.h == nil {
			m, a.err = runtime.DefaultUnstructuredConverter.ToUnstructured(a.cluster)
		} else {
			m, a.err = a.h.ClusterObject(a.cluster)
		}
		a.vars = map[string]any{"managedCluster": m}
	}
	return a.vars, a.err
}

// celMismatch returns "" when every expression is true, else why the first one is not.
func celMismatch(exprs []celExpr, act *activation) string {
	for _, e := range exprs {
		vars, err := act.get()
		if err != nil {
			return fmt.Sprintf("celExpressions[%d]: cannot convert the cluster: %v", e.index, err)
		}
		out, _, err := e.prg.Eval(vars)
		if err != nil {
			return fmt.Sprintf("celExpressions[%d] %q: evaluation error: %v", e.index, e.src, err)
		}
		if b, ok := out.Value().(bool); !ok || !b {
			return fmt.Sprintf("celExpressions[%d] %q is %v", e.index, e.src, out.Value())
		}
	}
	return ""
}
