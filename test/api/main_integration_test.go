//go:build integration

package api

import (
	"context"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{CRDs: true})) }

// clients returns a dynamic client and a REST mapper for the hub.
func clients(t *testing.T) (dynamic.Interface, meta.RESTMapper) {
	t.Helper()
	env := testenv.Start(t, testenv.Options{CRDs: true})
	dc, err := dynamic.NewForConfig(env.Hub.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(env.Hub.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	_ = context.Background()
	return dc, mapper
}
