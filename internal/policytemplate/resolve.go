package policytemplate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

// Delims are a kind of template's delimiters.
type Delims struct{ Start, Stop string }

var (
	// Hub are hub templates' delimiters, resolved on the hub.
	Hub = Delims{"{{hub", "hub}}"}
	// Cluster are cluster templates' delimiters, resolved on the managed cluster.
	Cluster = Delims{"{{", "}}"}
)

// ErrorAnnotation is set on a policy template whose hub templates could not be resolved, with the
// error (OCM's name); the cluster reports it as the template's violation.
const ErrorAnnotation = "policy.open-cluster-management.io/hub-templates-error"

// DisableAnnotation, "true" on a root policy, leaves its hub templates unresolved (OCM's name).
const DisableAnnotation = "policy.open-cluster-management.io/disable-templates"

// TriggerUpdateAnnotation, changed on a root policy, has the hub resolve its hub templates again
// at once (OCM's name); the copies do not carry it.
const TriggerUpdateAnnotation = "policy.open-cluster-management.io/trigger-update"

// ErrRestrictedNamespace is the error of a read outside Options.Namespace.
var ErrRestrictedNamespace = errors.New("the namespace argument is restricted")

// Source reads the objects that templates name. Get returns the object, or an error for which
// apierrors.IsNotFound is true when there is none; List returns the objects of a kind in a
// namespace ("" for every namespace or a cluster-scoped kind).
type Source interface {
	Get(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error)
	List(ctx context.Context, apiVersion, kind, namespace string) ([]map[string]any, error)
}

// Options are one resolution's settings.
type Options struct {
	Delims Delims
	Source Source
	// Namespace, when set, confines reads to this namespace (a namespace argument of "" means
	// it); cluster-scoped reads are refused unless ClusterScoped allows them.
	Namespace     string
	ClusterScoped func(apiVersion, kind, name string) bool
	// Context is the templates' dot: the hub's has ManagedClusterName, ManagedClusterLabels and
	// PolicyMetadata.
	Context any
}

// Has reports whether raw holds a template of delims.
func Has(raw []byte, d Delims) bool {
	if d == Cluster {
		// A hub template's delimiter is not a cluster template.
		return bytes.Contains(bytes.ReplaceAll(raw, []byte(Hub.Start), nil), []byte(Cluster.Start))
	}
	return bytes.Contains(raw, []byte(d.Start))
}

// Resolve resolves the templates in raw, a JSON object, and returns it as JSON.
func Resolve(ctx context.Context, raw []byte, opts Options) ([]byte, error) {
	y, err := yaml.JSONToYAML(raw)
	if err != nil {
		return nil, fmt.Errorf("the object is not JSON: %w", err)
	}
	out, err := ResolveText(ctx, string(y), opts)
	if err != nil {
		return nil, err
	}
	j, err := yaml.YAMLToJSON([]byte(out))
	if err != nil {
		return nil, fmt.Errorf("the resolved templates are not YAML: %w", err)
	}
	return j, nil
}

// ResolveText resolves the templates in text, YAML (object-templates-raw).
func ResolveText(ctx context.Context, text string, opts Options) (string, error) {
	text = unquoteTyped(text, opts.Delims)
	text = autoindent(text, opts.Delims)
	r := &resolver{ctx: ctx, opts: opts}
	t, err := template.New("policy").Delims(opts.Delims.Start, opts.Delims.Stop).Option("missingkey=zero").Funcs(r.funcs()).Parse(text)
	if err != nil {
		return "", fmt.Errorf("parsing the templates: %w", err)
	}
	b := &limited{max: MaxOutput}
	if err := t.Execute(b, opts.Context); err != nil {
		return "", fmt.Errorf("resolving the templates: %w", unwrapExec(err))
	}
	return b.String(), nil
}

// limited is a strings.Builder that fails past max bytes.
type limited struct {
	strings.Builder
	max int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.Len()+len(p) > l.max {
		return 0, fmt.Errorf("%w: the resolved templates exceed %d bytes", ErrInvalidInput, l.max)
	}
	return l.Builder.Write(p)
}

// unwrapExec drops text/template's location prefix from a function's error, which names the
// template "policy" and a line of the intermediate YAML rather than of what the user wrote.
func unwrapExec(err error) error {
	var e template.ExecError
	if errors.As(err, &e) && e.Err != nil {
		if inner := errors.Unwrap(e.Err); inner != nil {
			return inner
		}
	}
	return err
}

// unquoteTyped drops the quotes YAML puts around a template whose value has a type of its own
// (toInt, toBool, toLiteral) or is a map (copyConfigMapData, copySecretData).
func unquoteTyped(text string, d Delims) string {
	s, e := regexp.QuoteMeta(d.Start), regexp.QuoteMeta(d.Stop)
	re := regexp.MustCompile(`:\s+(?:[|>]-?\s+)?'?\s*(` + s + `-?(?:.*\|\s*(?:toInt|toBool|toLiteral)|.*(?:copyConfigMapData|copySecretData)).*?-?` + e + `)\s*'?`)
	return re.ReplaceAllString(text, ": $1")
}

// autoindent turns `| autoindent` into `| indent N`, N the template's column.
func autoindent(text string, d Delims) string {
	s, e := regexp.QuoteMeta(d.Start), regexp.QuoteMeta(d.Stop)
	re := regexp.MustCompile(`( *)['"]?(` + s + `.*\| *autoindent *-?` + e + `)`)
	return re.ReplaceAllStringFunc(text, func(m string) string {
		sub := re.FindStringSubmatch(m)
		return strings.Replace(m, "autoindent", fmt.Sprintf("indent %d", len(sub[1])), 1)
	})
}
