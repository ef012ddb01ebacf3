package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	addonv1beta1 "github.com/flotilla/flotilla/api/addon/v1beta1"
	authenticationv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	dynamicscoringv1alpha1 "github.com/flotilla/flotilla/api/dynamicscoring/v1alpha1"
	failoverv1alpha1 "github.com/flotilla/flotilla/api/failover/v1alpha1"
	federationaiv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	multiclusterv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	policyv1beta1 "github.com/flotilla/flotilla/api/policy/v1beta1"
	queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
)

var builder = runtime.NewSchemeBuilder(
	clientgoscheme.AddToScheme,
	clusterv1.AddToScheme, clusterv1alpha1.AddToScheme, clusterv1beta1.AddToScheme, clusterv1beta2.AddToScheme,
	workv1.AddToScheme, workv1alpha1.AddToScheme,
	addonv1alpha1.AddToScheme, addonv1beta1.AddToScheme,
	authenticationv1beta1.AddToScheme,
	multiclusterv1alpha1.AddToScheme,
	federationaiv1alpha1.AddToScheme,
	dynamicscoringv1alpha1.AddToScheme,
	usagev1alpha1.AddToScheme,
	failoverv1alpha1.AddToScheme,
	queuev1alpha1.AddToScheme,
	policyv1.AddToScheme, policyv1beta1.AddToScheme,
	// Kueue's kinds, which the hub writes for MultiKueue (internal/hub/kueue) when Kueue is installed.
	kueuev1beta2.AddToScheme,
)

// AddToScheme adds client-go's kinds, every Flotilla API group and Kueue's v1beta2 kinds to s.
var AddToScheme = builder.AddToScheme

// Scheme holds every kind Flotilla uses.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(AddToScheme(s))
	return s
}()
