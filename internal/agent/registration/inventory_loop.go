package registration

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
)

// inventoryLoop reads the spoke's inventory every lease period while the hub accepts the
// cluster and shares it with the status loop when it changed. A spoke that does not answer
// leaves the last inventory in place.
type inventoryLoop struct {
	a *Agent
	// warnings are the last warnings logged, so that a steady cluster logs them once.
	warnings []string
}

func (l *inventoryLoop) step(ctx context.Context) (time.Duration, error) {
	a := l.a
	mc := a.accepted()
	if mc == nil {
		return a.opts.Poll, nil
	}
	inv, warnings, err := a.readInventory(ctx)
	if err != nil {
		return 0, err
	}
	if !slices.Equal(warnings, l.warnings) {
		for _, w := range warnings {
			a.opts.Log.Info("inventory: "+w, "cluster", a.opts.ClusterName)
		}
		l.warnings = warnings
	}
	if old := a.inventory.Get(); old == nil || !inventoryEqual(old.status(), inv.status()) {
		a.inventory.Set(&inv)
	}
	return leaseInterval(mc.LeaseDuration()), nil
}

// status is the inventory as it appears in a ManagedCluster's status.
func (inv *Inventory) status() *clusterv1.ManagedClusterStatus {
	return &clusterv1.ManagedClusterStatus{
		Capacity: inv.Capacity, Allocatable: inv.Allocatable, Version: inv.Version, ClusterClaims: inv.ClusterClaims,
	}
}

// readInventory reads the spoke's nodes, ClusterClaims and version and computes the inventory.
// Lists are served from the API server's cache (resourceVersion 0): the agent reads them every
// lease period and needs no stronger consistency than the next period brings.
func (a *Agent) readInventory(ctx context.Context) (Inventory, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	nodes, err := a.spoke.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return Inventory{}, nil, a.spokeErr("list nodes", err)
	}
	claims, err := a.clusterClaims(ctx)
	if err != nil {
		return Inventory{}, nil, err
	}
	version, err := a.spoke.Discovery().ServerVersion()
	if err != nil {
		return Inventory{}, nil, a.spokeErr("read the Kubernetes version", err)
	}
	inv, warnings := ComputeInventory(nodes.Items, claims, version.GitVersion, clusterv1alpha1.DefaultMaxCustomClusterClaims)
	return inv, warnings, nil
}

// clusterClaimsPath lists ClusterClaims; they are cluster-scoped and live on the spoke.
var clusterClaimsPath = "/apis/" + clusterv1alpha1.GroupVersion.String() + "/clusterclaims"

// clusterClaims lists the spoke's ClusterClaims; a spoke without the ClusterClaim CRD has none.
// It asks the API server directly rather than through a typed client, which would need a REST
// mapping, so the agent needs nothing beyond its clientset.
func (a *Agent) clusterClaims(ctx context.Context) ([]clusterv1alpha1.ClusterClaim, error) {
	raw, err := a.spoke.Discovery().RESTClient().Get().AbsPath(clusterClaimsPath).Param("resourceVersion", "0").DoRaw(ctx)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, a.spokeErr("list ClusterClaims", err)
	}
	list := &clusterv1alpha1.ClusterClaimList{}
	if err := json.Unmarshal(raw, list); err != nil {
		return nil, a.spokeErr("decode the ClusterClaims", err)
	}
	return list.Items, nil
}
