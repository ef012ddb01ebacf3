package clusterset

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla/flotilla/internal/apitest"
)

// deletedAt marks test objects as being deleted (a zero time would not).
var deletedAt = metav1.NewTime(time.Unix(1, 0))

// makeSet is a set at generation 1 that selects by the clusterset label.
func makeSet(name string) *apitest.ClusterSetWrapper {
	return apitest.MakeClusterSet(name).Generation(1)
}
