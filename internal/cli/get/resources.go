package get

import (
	"fmt"
	"io"
	"strings"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// resourceType is one kind `flotilla get` lists.
type resourceType struct {
	// name is what messages call it; aliases are the other names the command accepts, the
	// kind's plural, singular and CRD short names among them.
	name       string
	aliases    []string
	namespaced bool
	// byCluster kinds live in the namespace named after their cluster, so -c CLUSTER selects
	// that namespace.
	byCluster bool
	newList   func() client.ObjectList
	// related, when set, is another kind the table reads (of every namespace); the table does
	// without it when the caller may not list it.
	related func() client.ObjectList
	// printTable writes the table of the kind.
	printTable tablePrinter
	// printWideTable, when set, is printTable for -o wide: the table with more columns. Kinds
	// without it refuse -o wide.
	printWideTable tablePrinter
}

// tablePrinter writes list, a list from newList, as a table; related is the list of related or
// nil. allNamespaces adds a NAMESPACE column; it is only ever true for namespaced kinds.
type tablePrinter func(w io.Writer, list, related client.ObjectList, clk clock.PassiveClock, allNamespaces bool) error

// resources is every kind the command lists, in the order help and errors name them.
var resources = []resourceType{
	{
		name:    "clusters",
		aliases: []string{"cluster", "managedclusters", "managedcluster", "mcl", "mcls"},
		newList: func() client.ObjectList { return &clusterv1.ManagedClusterList{} },
		related: func() client.ObjectList { return &usagev1alpha1.ResourceUsageList{} },
		printTable: func(w io.Writer, list, related client.ObjectList, clk clock.PassiveClock, _ bool) error {
			usages, _ := related.(*usagev1alpha1.ResourceUsageList)
			return printClusters(w, list.(*clusterv1.ManagedClusterList), usages, clk)
		},
	},
	{
		name:    "clustersets",
		aliases: []string{"clusterset", "managedclustersets", "managedclusterset", "mclset", "mclsets"},
		newList: func() client.ObjectList { return &clusterv1beta2.ManagedClusterSetList{} },
		printTable: func(w io.Writer, list, _ client.ObjectList, clk clock.PassiveClock, _ bool) error {
			return printClusterSets(w, list.(*clusterv1beta2.ManagedClusterSetList), clk)
		},
	},
	{
		name:       "bindings",
		aliases:    []string{"binding", "managedclustersetbindings", "managedclustersetbinding", "mclsetbinding", "mclsetbindings"},
		namespaced: true,
		newList:    func() client.ObjectList { return &clusterv1beta2.ManagedClusterSetBindingList{} },
		printTable: func(w io.Writer, list, _ client.ObjectList, clk clock.PassiveClock, allNamespaces bool) error {
			return printBindings(w, list.(*clusterv1beta2.ManagedClusterSetBindingList), clk, allNamespaces)
		},
	},
	{
		name:       "placements",
		aliases:    []string{"placement"},
		namespaced: true,
		newList:    func() client.ObjectList { return &clusterv1beta1.PlacementList{} },
		printTable: func(w io.Writer, list, _ client.ObjectList, clk clock.PassiveClock, allNamespaces bool) error {
			return printPlacements(w, list.(*clusterv1beta1.PlacementList), clk, allNamespaces)
		},
	},
	{
		name:       "works",
		aliases:    []string{"work", "manifestworks", "manifestwork", "mw"},
		namespaced: true,
		byCluster:  true,
		newList:    func() client.ObjectList { return &workv1.ManifestWorkList{} },
		printTable: func(w io.Writer, list, _ client.ObjectList, clk clock.PassiveClock, allNamespaces bool) error {
			return printWorks(w, list.(*workv1.ManifestWorkList), clk, allNamespaces)
		},
	},
	{
		name:       "addons",
		aliases:    []string{"addon", "managedclusteraddons", "managedclusteraddon", "mca", "mcas"},
		namespaced: true,
		byCluster:  true,
		newList:    func() client.ObjectList { return &addonv1alpha1.ManagedClusterAddOnList{} },
		printTable: func(w io.Writer, list, _ client.ObjectList, clk clock.PassiveClock, allNamespaces bool) error {
			return printAddOns(w, list.(*addonv1alpha1.ManagedClusterAddOnList), clk, allNamespaces)
		},
	},
	{
		name:       "policies",
		aliases:    []string{"policy", "plc"},
		namespaced: true,
		byCluster:  true,
		newList:    func() client.ObjectList { return &policyv1.PolicyList{} },
		printTable: func(w io.Writer, list, _ client.ObjectList, clk clock.PassiveClock, allNamespaces bool) error {
			return printPolicies(w, list.(*policyv1.PolicyList), clk, allNamespaces)
		},
	},
	{
		name:       "federatedlearnings",
		aliases:    []string{"federatedlearning", "fl", "fls"},
		namespaced: true,
		newList:    func() client.ObjectList { return &flv1alpha1.FederatedLearningList{} },
		printTable: func(w io.Writer, list, _ client.ObjectList, clk clock.PassiveClock, allNamespaces bool) error {
			return printFederatedLearnings(w, list.(*flv1alpha1.FederatedLearningList), clk, allNamespaces, false)
		},
		printWideTable: func(w io.Writer, list, _ client.ObjectList, clk clock.PassiveClock, allNamespaces bool) error {
			return printFederatedLearnings(w, list.(*flv1alpha1.FederatedLearningList), clk, allNamespaces, true)
		},
	},
}

// lookupResource finds the kind a user named, ignoring case as kubectl does.
func lookupResource(arg string) (resourceType, error) {
	name := strings.ToLower(arg)
	for _, r := range resources {
		if r.name == name {
			return r, nil
		}
		for _, a := range r.aliases {
			if a == name {
				return r, nil
			}
		}
	}
	return resourceType{}, fmt.Errorf("unknown resource %q: flotilla get lists %s", arg, resourceNames())
}

// wideNames lists the kinds -o wide prints, for messages: "federatedlearnings".
func wideNames() string {
	var names []string
	for _, r := range resources {
		if r.printWideTable != nil {
			names = append(names, r.name)
		}
	}
	return strings.Join(names, ", ")
}

// resourceNames lists the accepted names for messages: "clusters (cluster, ...), ...".
func resourceNames() string {
	names := make([]string, len(resources))
	for i, r := range resources {
		names[i] = fmt.Sprintf("%s (%s)", r.name, strings.Join(r.aliases, ", "))
	}
	return strings.Join(names, ", ")
}
