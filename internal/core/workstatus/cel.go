package workstatus

import (
	"errors"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
)

// Cost bounds of condition rules, those of the Kubernetes API server's CEL (which OCM uses):
// one expression may cost at most ExpressionCostLimit, all the rules of one object together at
// most RuleCostBudget.
const (
	ExpressionCostLimit = 1_000_000
	RuleCostBudget      = 10_000_000
)

type envKind int

const (
	ruleEnvKind    envKind = iota // variable object
	messageEnvKind                // variables object and result
)

// maxPrograms bounds the compiled-program cache; rules are few and repeat every status resync.
const maxPrograms = 4096

var (
	envOnce sync.Once
	envs    [2]*cel.Env
	envErr  error

	progMu sync.Mutex
	progs  = map[progKey]progEntry{}
)

type progKey struct {
	kind envKind
	expr string
}

type progEntry struct {
	prg cel.Program
	err error
}

// newEnv declares object (and result for messages), cel-go's string, list, set and math
// extensions, and OCM's hasConditions(status), true when status has a non-empty conditions
// list. OCM also offers the Kubernetes CEL libraries; expressions that use them do not compile
// here and are reported as such.
func newEnv(kind envKind) (*cel.Env, error) {
	opts := []cel.EnvOption{
		ext.Strings(), ext.Lists(), ext.Sets(), ext.Math(),
		cel.Variable("object", cel.DynType),
		cel.Function("hasConditions", cel.Overload("status_has_conditions",
			[]*cel.Type{cel.DynType}, cel.BoolType, cel.UnaryBinding(hasConditions))),
	}
	if kind == messageEnvKind {
		opts = append(opts, cel.Variable("result", cel.BoolType))
	}
	return cel.NewEnv(opts...)
}

func hasConditions(v ref.Val) ref.Val {
	m, ok := v.(traits.Mapper)
	if !ok {
		return types.False
	}
	c, found := m.Find(types.String("conditions"))
	if !found {
		return types.False
	}
	l, ok := c.(traits.Lister)
	return types.Bool(ok && l.Size() != types.IntZero)
}

func program(kind envKind, expr string) (cel.Program, error) {
	envOnce.Do(func() {
		for _, k := range []envKind{ruleEnvKind, messageEnvKind} {
			if envs[k], envErr = newEnv(k); envErr != nil {
				return
			}
		}
	})
	if envErr != nil {
		return nil, fmt.Errorf("internal error creating the CEL environment: %w", envErr)
	}
	key := progKey{kind, expr}
	progMu.Lock()
	e, ok := progs[key]
	progMu.Unlock()
	if ok {
		return e.prg, e.err
	}
	ast, iss := envs[kind].Compile(expr)
	if iss.Err() != nil {
		e.err = fmt.Errorf("does not compile: %v", iss.Err())
	} else {
		e.prg, e.err = envs[kind].Program(ast, cel.CostLimit(ExpressionCostLimit), cel.EvalOptions(cel.OptTrackCost))
	}
	progMu.Lock()
	if len(progs) >= maxPrograms {
		clear(progs)
	}
	progs[key] = e
	progMu.Unlock()
	return e.prg, e.err
}

var errBudget = errors.New("the rules of this object exceed their CEL cost budget; simplify the expressions")

// evalExpr evaluates expr and charges its cost to budget.
func evalExpr(kind envKind, expr string, vars map[string]any, budget *int64) (any, error) {
	if *budget <= 0 {
		return nil, errBudget
	}
	prg, err := program(kind, expr)
	if err != nil {
		return nil, err
	}
	out, det, err := prg.Eval(vars)
	if det != nil && det.ActualCost() != nil {
		*budget -= int64(*det.ActualCost())
	}
	if err != nil {
		return nil, err
	}
	if *budget < 0 {
		return nil, errBudget
	}
	return out.Value(), nil
}
