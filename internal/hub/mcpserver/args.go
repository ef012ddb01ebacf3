package mcpserver

import (
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// checkName checks a metadata.name argument: a DNS subdomain, as the API server requires of
// every kind the tools name. required says whether it may be empty.
func checkName(arg, value string, required bool) error {
	if value == "" {
		if required {
			return argError(arg, "is required: give the object's name")
		}
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(value); len(errs) > 0 {
		return argError(arg, "%q is not a valid name (%s): give the name as `kubectl get` prints it", value, strings.Join(errs, "; "))
	}
	return nil
}

// checkNamespace checks a namespace argument (or a cluster name, which is its namespace): a DNS
// label. An empty one is allowed; callers put the default in its place.
func checkNamespace(arg, value string) error {
	if value == "" {
		return nil
	}
	if errs := validation.IsDNS1123Label(value); len(errs) > 0 {
		return argError(arg, "%q is not a valid namespace (%s): give a namespace as `kubectl get namespaces` prints it, or leave it out", value, strings.Join(errs, "; "))
	}
	return nil
}

// parseSelector parses a label selector argument; empty selects everything.
func parseSelector(arg, value string) (labels.Selector, error) {
	if value == "" {
		return labels.Everything(), nil
	}
	s, err := labels.Parse(value)
	if err != nil {
		return nil, argError(arg, "%q is not a label selector (%v): write it as kubectl -l takes it, such as region=us-east,gpu or 'tier in (a,b)'", value, err)
	}
	return s, nil
}

// namespaceOf is ns, or the server's default namespace when empty.
func (s *server) namespaceOf(ns string) string {
	if ns == "" {
		return s.Namespace
	}
	return ns
}

// scope checks a tool's namespace and allNamespaces arguments, and returns the options that list
// what they select and the words for it in messages ("in namespace x", "in every namespace").
// what names the listed objects in the error for both at once.
func (s *server) scope(namespace string, all bool, what string) ([]client.ListOption, string, error) {
	if all && namespace != "" {
		return nil, "", argError("allNamespaces", "contradicts namespace %q: give namespace for one namespace's %s, allNamespaces for every namespace's", namespace, what)
	}
	if err := checkNamespace("namespace", namespace); err != nil {
		return nil, "", err
	}
	if all {
		return nil, "in every namespace", nil
	}
	ns := s.namespaceOf(namespace)
	return []client.ListOption{client.InNamespace(ns)}, "in namespace " + ns, nil
}

// reargue renames the argument an argError names, for a tool that calls a helper written for
// another tool's arguments.
func reargue(err error, from, to string) error {
	msg := err.Error()
	if prefix := "argument \"" + from + "\": "; strings.HasPrefix(msg, prefix) {
		return argError(to, "%s", strings.TrimPrefix(msg, prefix))
	}
	return err
}
