package predicate

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/api/resource"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/gpufit"
)

// gpuFunctions declares the member functions on managedCluster that read the cluster's
// ResourceUsage with plugins/gpufit (the functions the GPUFit filter decides with):
//
//	freeGPUs(model) int                      free nvidia.com/gpu of the model ("" = any model)
//	nodesWithFreeGPUs(model, k) int          nodes of the model with at least k free nvidia.com/gpu
//	gpuFit(model, perNode, nodes) bool       at least nodes nodes with perNode free each
//	nodesWithFree(resource, model, amount) int  nodes with at least amount (a quantity string) free
//
// Figures that are missing or expired are an evaluation error, as a missing AddOnPlacementScore
// is for scores(), so the cluster does not match and its explanation says why.
func gpuFunctions(h framework.Handle) []cel.EnvOption {
	mc := cel.MapType(cel.StringType, cel.DynType)
	figures := func(cluster ref.Val) (*usagev1alpha1.ResourceUsageStatus, ref.Val) {
		name := clusterNameOf(cluster)
		st, why := gpufit.Lookup(h, name)
		if st == nil {
			return nil, types.NewErr("%s", why)
		}
		return st, nil
	}
	str := func(v ref.Val, fn, arg string) (string, ref.Val) {
		s, ok := v.Value().(string)
		if !ok {
			return "", types.NewErr("%s: %s must be a string", fn, arg)
		}
		return s, nil
	}
	num := func(v ref.Val, fn, arg string) (int64, ref.Val) {
		n, ok := v.Value().(int64)
		if !ok || n < 0 {
			return 0, types.NewErr("%s: %s must be an int of at least 0", fn, arg)
		}
		return n, nil
	}
	freeGPUs := func(cluster, model ref.Val) ref.Val {
		m, errv := str(model, "freeGPUs", "model")
		if errv != nil {
			return errv
		}
		st, errv := figures(cluster)
		if errv != nil {
			return errv
		}
		free := gpufit.Free(st, usagev1alpha1.ResourceNvidiaGPU, m)
		return types.Int(free.Value())
	}
	nodesWithFreeGPUs := func(cluster, model, k ref.Val) ref.Val {
		m, errv := str(model, "nodesWithFreeGPUs", "model")
		if errv != nil {
			return errv
		}
		n, errv := num(k, "nodesWithFreeGPUs", "k")
		if errv != nil {
			return errv
		}
		st, errv := figures(cluster)
		if errv != nil {
			return errv
		}
		return types.Int(gpufit.NodesWithAtLeast(st, usagev1alpha1.ResourceNvidiaGPU, m, *resource.NewQuantity(n, resource.DecimalSI)))
	}
	gpuFit := func(args ...ref.Val) ref.Val {
		if len(args) != 4 {
			return types.NewErr("gpuFit: takes model, perNode and nodes")
		}
		m, errv := str(args[1], "gpuFit", "model")
		if errv != nil {
			return errv
		}
		perNode, errv := num(args[2], "gpuFit", "perNode")
		if errv != nil {
			return errv
		}
		nodes, errv := num(args[3], "gpuFit", "nodes")
		if errv != nil {
			return errv
		}
		st, errv := figures(args[0])
		if errv != nil {
			return errv
		}
		req := gpufit.Requirement{Resource: usagev1alpha1.ResourceNvidiaGPU, Model: m,
			PerNode: *resource.NewQuantity(perNode, resource.DecimalSI), Nodes: int32(min(nodes, 1<<31-1))}
		return types.Bool(gpufit.Fit(st, req).Fits)
	}
	nodesWithFree := func(args ...ref.Val) ref.Val {
		if len(args) != 4 {
			return types.NewErr("nodesWithFree: takes resource, model and amount")
		}
		res, errv := str(args[1], "nodesWithFree", "resource")
		if errv != nil {
			return errv
		}
		m, errv := str(args[2], "nodesWithFree", "model")
		if errv != nil {
			return errv
		}
		a, errv := str(args[3], "nodesWithFree", "amount")
		if errv != nil {
			return errv
		}
		amount, err := resource.ParseQuantity(a)
		if err != nil {
			return types.NewErr("nodesWithFree: amount %q is not a quantity (such as \"8\", \"500m\" or \"64Gi\")", a)
		}
		st, errv := figures(args[0])
		if errv != nil {
			return errv
		}
		return types.Int(gpufit.NodesWithAtLeast(st, res, m, amount))
	}
	return []cel.EnvOption{
		cel.Function("freeGPUs", cel.MemberOverload("managedcluster_freegpus_string",
			[]*cel.Type{mc, cel.StringType}, cel.IntType, cel.BinaryBinding(freeGPUs))),
		cel.Function("nodesWithFreeGPUs", cel.MemberOverload("managedcluster_nodeswithfreegpus_string_int",
			[]*cel.Type{mc, cel.StringType, cel.IntType}, cel.IntType,
			cel.FunctionBinding(func(args ...ref.Val) ref.Val { return nodesWithFreeGPUs(args[0], args[1], args[2]) }))),
		cel.Function("gpuFit", cel.MemberOverload("managedcluster_gpufit_string_int_int",
			[]*cel.Type{mc, cel.StringType, cel.IntType, cel.IntType}, cel.BoolType, cel.FunctionBinding(gpuFit))),
		cel.Function("nodesWithFree", cel.MemberOverload("managedcluster_nodeswithfree_string_string_string",
			[]*cel.Type{mc, cel.StringType, cel.StringType, cel.StringType}, cel.IntType, cel.FunctionBinding(nodesWithFree))),
	}
}
