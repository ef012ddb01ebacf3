package mcpserver

import (
	"context"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kueueGroup is Kueue's API group, and kueueVersions its versions that serve Workloads, the
// newest first. Flotilla does not build Kueue's types into its reads here: whichever version the
// hub serves is read as unstructured.
const kueueGroup = "kueue.x-k8s.io"

var kueueVersions = []string{"v1beta2", "v1beta1"}

// KueueInput are kueue_workloads' arguments.
type KueueInput struct {
	Namespace     string `json:"namespace,omitempty" jsonschema:"namespace of the Workloads (default: the kubeconfig context's namespace)"`
	AllNamespaces bool   `json:"allNamespaces,omitempty" jsonschema:"list the Workloads of every namespace; namespace must then be left out"`
}

// KueueOutput is kueue_workloads' answer.
type KueueOutput struct {
	// Served says whether the hub serves Kueue's Workloads; when not, Message says so and how to
	// change it, and Workloads is empty.
	Served     bool       `json:"served" jsonschema:"whether the hub serves Kueue's Workloads (Kueue's CRDs are installed on the hub)"`
	APIVersion string     `json:"apiVersion,omitempty"`
	Message    string     `json:"message,omitempty"`
	Workloads  []Workload `json:"workloads"`
}

func (s *server) addKueueTools(m *mcp.Server) {
	addTool(m, &mcp.Tool{Name: "kueue_workloads", Annotations: readOnly,
		Description: "List Kueue Workloads on the hub (batch jobs submitted to a LocalQueue there) with their queue, quota, admission " +
			"checks and the MultiKueue worker cluster each runs on. When the hub does not serve Kueue's API, says so (served: false)."}, s.kueueWorkloads)
	addTool(m, &mcp.Tool{Name: "explain_workload", Annotations: readOnly,
		Description: "Explain one Kueue Workload on the hub as `flotilla explain workload -o json` does: a one-line summary of why it waits " +
			"or where it runs; its LocalQueue, ClusterQueue, priority and conditions (Kueue's quota message among them); its place among " +
			"the ClusterQueue's pending workloads (computed as Kueue orders them, not read from Kueue's visibility API); its admission " +
			"checks; and the workers of its MultiKueueConfig in rank order, each with whether it is active, the MultiKueue dispatcher's " +
			"verdict on the workload's pods there with the numbers, whether it is offered the workload and whether it runs there."}, s.explainWorkload)
}

// ExplainWorkloadInput are explain_workload's arguments.
type ExplainWorkloadInput struct {
	Namespace string `json:"namespace,omitempty" jsonschema:"namespace of the Workload (default: the kubeconfig context's namespace)"`
	Name      string `json:"name" jsonschema:"name of the Workload (a Job's Workload is named after the Job: list them with kueue_workloads)"`
}

func (s *server) explainWorkload(ctx context.Context, _ *mcp.CallToolRequest, in ExplainWorkloadInput) (*mcp.CallToolResult, WorkloadExplanation, error) {
	if err := checkNamespace("namespace", in.Namespace); err != nil {
		return nil, WorkloadExplanation{}, err
	}
	if err := checkName("name", in.Name, true); err != nil {
		return nil, WorkloadExplanation{}, err
	}
	ns := s.namespaceOf(in.Namespace)
	e, err := explainWorkload(ctx, s.Client, ns, in.Name, s.Clock.Now())
	switch {
	case apierrors.IsNotFound(err):
		return nil, WorkloadExplanation{}, argError("name", "no Workload %q in namespace %s: list them with kueue_workloads (namespace %q)", in.Name, ns, ns)
	case meta.IsNoMatchError(err):
		return nil, WorkloadExplanation{}, fmt.Errorf("the hub does not serve Kueue's Workloads (%w): install Kueue's CRDs on the hub (docs/kueue.md)", err)
	case err != nil:
		return nil, WorkloadExplanation{}, hubError(err, "explaining Workload "+ns+"/"+in.Name, "")
	}
	return nil, *e, nil
}

func (s *server) kueueWorkloads(ctx context.Context, _ *mcp.CallToolRequest, in KueueInput) (*mcp.CallToolResult, KueueOutput, error) {
	opts, where, err := s.scope(in.Namespace, in.AllNamespaces, "workloads")
	if err != nil {
		return nil, KueueOutput{}, err
	}
	version, missing, err := s.kueueVersion()
	if err != nil {
		return nil, KueueOutput{}, err
	}
	if version == "" {
		return nil, KueueOutput{Served: false, Workloads: []Workload{}, Message: missing}, nil
	}
	gv := schema.GroupVersion{Group: kueueGroup, Version: version}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gv.WithKind("WorkloadList"))
	if err := s.Client.List(ctx, list, opts...); err != nil {
		return nil, KueueOutput{}, hubError(err, "listing Kueue workloads ("+gv.String()+") "+where, "")
	}
	return nil, KueueOutput{Served: true, APIVersion: gv.String(), Workloads: workloads(list.Items, s.Clock.Now())}, nil
}

// kueueVersion is the newest version of Kueue's group the hub serves Workloads at, or "" and why
// none is.
func (s *server) kueueVersion() (version, missing string, err error) {
	var seen []string
	for _, v := range kueueVersions {
		gv := schema.GroupVersion{Group: kueueGroup, Version: v}.String()
		l, err := s.Discovery.ServerResourcesForGroupVersion(gv)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return "", "", hubError(err, "discovering whether the hub serves "+gv, "")
		}
		seen = append(seen, gv)
		if slices.ContainsFunc(l.APIResources, func(r metav1.APIResource) bool { return r.Name == "workloads" }) {
			return v, "", nil
		}
	}
	if len(seen) > 0 {
		return "", fmt.Sprintf("the hub serves %v but no workloads in it: Kueue's Workload CRD is not installed on the hub", seen), nil
	}
	return "", fmt.Sprintf("Kueue is not installed on the hub: it serves no %s API (neither %v), so there are no Kueue Workloads to list. "+
		"Install Kueue's CRDs on the hub to submit jobs there (docs/kueue.md)", kueueGroup, kueueVersions), nil
}
