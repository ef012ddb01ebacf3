package dashboard

import (
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// DefaultLimit is a page's size when the viewer asks for none, and MaxLimit the largest page.
const (
	DefaultLimit = 100
	MaxLimit     = 500
	// maxContinue bounds the continue token: the API server's are a few hundred bytes.
	maxContinue = 4096
)

// query are a list's parameters.
type query struct {
	Limit         int64
	Continue      string
	Namespace     string
	LabelSelector labels.Selector
	View          string
	// Cluster narrows a view to one cluster (the GPU map's zoom).
	Cluster string
}

// parseQuery reads q, of which only the parameters in allowed may be given. Errors name the
// parameter and the fix.
func parseQuery(q url.Values, allowed ...string) (query, *apiError) {
	out := query{Limit: DefaultLimit, LabelSelector: labels.Everything()}
	var unknown []string
	for k := range q {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return out, badRequest("unknown parameter %q: this route takes %s", unknown[0], strings.Join(allowed, ", "))
	}
	for k, v := range q {
		if len(v) > 1 {
			return out, badParam(k, "given %d times: give it once", len(v))
		}
	}
	if v, ok := q["limit"]; ok {
		n, err := strconv.ParseInt(v[0], 10, 64)
		switch {
		case err != nil:
			return out, badParam("limit", "%q is not a whole number: give a page size from 1 to %d", v[0], MaxLimit)
		case n < 1:
			return out, badParam("limit", "%d is less than 1: give a page size from 1 to %d", n, MaxLimit)
		case n > MaxLimit:
			return out, badParam("limit", "%d is more than the %d a page may hold: ask for at most %d and follow continue for the next page", n, MaxLimit, MaxLimit)
		}
		out.Limit = n
	}
	if v, ok := q["continue"]; ok {
		if len(v[0]) > maxContinue || strings.ContainsAny(v[0], " \t\r\n") {
			return out, badParam("continue", "is not a token this dashboard gave: start from the first page, without continue")
		}
		out.Continue = v[0]
	}
	if v, ok := q["namespace"]; ok && v[0] != "" {
		if errs := validation.IsDNS1123Label(v[0]); len(errs) > 0 {
			return out, badParam("namespace", "%q is not a namespace (%s): give one as `kubectl get namespaces` prints it, or leave it out for every namespace", v[0], strings.Join(errs, "; "))
		}
		out.Namespace = v[0]
	}
	if v, ok := q["labelSelector"]; ok && v[0] != "" {
		s, err := labels.Parse(v[0])
		if err != nil {
			return out, badParam("labelSelector", "%q is not a label selector (%v): write it as kubectl -l takes it, such as region=us-east,gpu", v[0], err)
		}
		out.LabelSelector = s
	}
	if v, ok := q["cluster"]; ok {
		if errs := validation.IsDNS1123Subdomain(v[0]); len(errs) > 0 {
			return out, badParam("cluster", "%q is not a cluster's name (%s): give one as `kubectl get managedclusters` prints it", v[0], strings.Join(errs, "; "))
		}
		out.Cluster = v[0]
	}
	if v, ok := q["view"]; ok {
		if _, known := streams[v[0]]; !known {
			return out, badParam("view", "%q is not a view: give one of %s", v[0], strings.Join(viewNames(), ", "))
		}
		out.View = v[0]
	}
	return out, nil
}

// checkName checks a name in a route.
func checkName(what, v string) *apiError {
	if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
		return notFound("%s %q is not a valid name (%s): give it as `kubectl get` prints it", what, v, strings.Join(errs, "; "))
	}
	return nil
}
