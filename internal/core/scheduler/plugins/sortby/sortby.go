// Package sortby orders the decisions inside each decision group, as spec.sortBy says:
// ClusterName (the default, and OCM's only order) by name ascending; Score by score descending,
// ties by name. Which clusters form which group does not depend on the order.
package sortby

import (
	"cmp"
	"strings"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

// Names are the registry keys: the values of spec.sortBy.
const (
	ClusterName = string(clusterv1beta1.SortByClusterName)
	Score       = string(clusterv1beta1.SortByScore)
)

var (
	_ framework.OrderPlugin = byName{}
	_ framework.OrderPlugin = byScore{}
)

type byName struct{}

// NewByName returns the ClusterName order.
func NewByName(framework.Handle, framework.Args) (framework.Plugin, error) { return byName{}, nil }

func (byName) Name() string { return "SortBy" + ClusterName }
func (byName) Compare(a, b clusterv1beta1.ClusterDecision) int {
	return strings.Compare(a.ClusterName, b.ClusterName)
}

type byScore struct{}

// NewByScore returns the Score order.
func NewByScore(framework.Handle, framework.Args) (framework.Plugin, error) { return byScore{}, nil }

func (byScore) Name() string { return "SortBy" + Score }
func (byScore) Compare(a, b clusterv1beta1.ClusterDecision) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return strings.Compare(a.ClusterName, b.ClusterName)
}
