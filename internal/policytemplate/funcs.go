package policytemplate

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/template"

	sprig "github.com/Masterminds/sprig/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// ErrInvalidInput is the error of a function called without what it needs.
var ErrInvalidInput = errors.New("invalid input")

// MaxItems bounds the lists until and seq make, and MaxOutput the text a resolution writes: a
// template is a policy author's input, resolved by the hub and the clusters, and must not be able
// to exhaust their memory.
const (
	MaxItems  = 10000
	MaxOutput = 4 << 20
)

func bounded1(until func(int) []int) func(int) ([]int, error) {
	return func(n int) ([]int, error) {
		if n > MaxItems || n < -MaxItems {
			return nil, fmt.Errorf("%w: until %d makes more than %d items", ErrInvalidInput, n, MaxItems)
		}
		return until(n), nil
	}
}

func boundedSeq(seq func(...int) string) func(...int) (string, error) {
	return func(p ...int) (string, error) {
		for _, n := range p {
			if n > MaxItems || n < -MaxItems {
				return "", fmt.Errorf("%w: seq of %d makes more than %d items", ErrInvalidInput, n, MaxItems)
			}
		}
		return seq(p...), nil
	}
}

func boundedRepeat(count int, s string) (string, error) {
	if count < 0 || count*max(len(s), 1) > MaxOutput {
		return "", fmt.Errorf("%w: repeat %d of %d bytes makes more than %d bytes", ErrInvalidInput, count, len(s), MaxOutput)
	}
	return strings.Repeat(s, count), nil
}

// unsafe are Sprig's functions that templates do not get: they read the process's environment
// or the network, or give a different value on every resolution (so a policy's copies would
// change at each reconcile).
var unsafe = []string{
	"env", "expandenv", "getHostByName",
	"genPrivateKey", "genCA", "genCAWithKey", "genSelfSignedCert", "genSelfSignedCertWithKey", "genSignedCert",
	"genSignedCertWithKey", "derivePassword", "encryptAES", "decryptAES", "buildCustomCert",
	"randAlpha", "randAlphaNum", "randAscii", "randNumeric", "randBytes", "randInt", "uuidv4", "shuffle",
	"now", "date", "dateInZone", "date_in_zone", "htmlDate", "htmlDateInZone", "dateModify", "date_modify",
	"mustDateModify", "must_date_modify", "ago", "unixEpoch", "duration", "durationRound",
	"toDate", "mustToDate", "untilStep",
}

type resolver struct {
	ctx  context.Context
	opts Options
}

func (r *resolver) funcs() template.FuncMap {
	f := sprig.TxtFuncMap()
	for _, name := range unsafe {
		delete(f, name)
	}
	for name, fn := range map[string]any{
		"until":              bounded1(f["until"].(func(int) []int)),
		"seq":                boundedSeq(f["seq"].(func(...int) string)),
		"repeat":             boundedRepeat,
		"fromSecret":         r.fromSecret,
		"fromConfigMap":      r.fromConfigMap,
		"fromClusterClaim":   r.fromClusterClaim,
		"lookupClusterClaim": r.lookupClusterClaim,
		"lookup":             r.lookup,
		"copyConfigMapData":  r.copyConfigMapData,
		"copySecretData":     r.copySecretData,
		"base64enc":          func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"base64dec":          base64dec,
		"indent":             indent,
		"atoi":               func(s string) int { i, _ := strconv.Atoi(s); return i },
		"toInt":              toInt,
		"toBool":             func(s string) bool { b, _ := strconv.ParseBool(s); return b },
		"toLiteral":          toLiteral,
		"fromJSON":           f["fromJson"],
		"toJSON":             f["toJson"],
		"fromYAML":           fromYAML,
		"toYAML":             toYAML,
		"fromYaml":           fromYAML,
		"toYaml":             toYAML,
	} {
		f[name] = fn
	}
	return f
}

// namespace is where a read of ns goes, or the error of a read outside Options.Namespace.
func (r *resolver) namespace(ns string) (string, error) {
	if r.opts.Namespace == "" {
		return ns, nil
	}
	if ns == "" {
		return r.opts.Namespace, nil
	}
	if ns != r.opts.Namespace {
		return "", fmt.Errorf("%w to %s: %s is another namespace", ErrRestrictedNamespace, r.opts.Namespace, ns)
	}
	return ns, nil
}

func (r *resolver) source() (Source, error) {
	if r.opts.Source == nil {
		return nil, errors.New("no objects can be read here")
	}
	return r.opts.Source, nil
}

func (r *resolver) get(apiVersion, kind, ns, name string) (map[string]any, error) {
	src, err := r.source()
	if err != nil {
		return nil, err
	}
	return src.Get(r.ctx, apiVersion, kind, ns, name)
}

func (r *resolver) data(kind, ns, name string) (map[string]any, error) {
	if name == "" || (ns == "" && r.opts.Namespace == "") {
		return nil, fmt.Errorf("%w: the namespace and name of the %s must be given", ErrInvalidInput, kind)
	}
	ns, err := r.namespace(ns)
	if err != nil {
		return nil, err
	}
	obj, err := r.get("v1", kind, ns, name)
	if err != nil {
		return nil, fmt.Errorf("failed to get the %s %s from %s: %w", kind, name, ns, err)
	}
	d, _, _ := unstructured.NestedStringMap(obj, "data")
	return toAny(d), nil
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// fromSecret is the value of key in the Secret, base64-encoded as the Secret keeps it.
func (r *resolver) fromSecret(ns, name, key string) (string, error) {
	if key == "" {
		return "", fmt.Errorf("%w: fromSecret needs a key", ErrInvalidInput)
	}
	d, err := r.data("Secret", ns, name)
	if err != nil {
		return "", err
	}
	v, _ := d[key].(string)
	return v, nil
}

func (r *resolver) fromConfigMap(ns, name, key string) (string, error) {
	if key == "" {
		return "", fmt.Errorf("%w: fromConfigMap needs a key", ErrInvalidInput)
	}
	d, err := r.data("ConfigMap", ns, name)
	if err != nil {
		return "", err
	}
	v, _ := d[key].(string)
	return v, nil
}

func (r *resolver) copyConfigMapData(ns, name string) (string, error) {
	d, err := r.data("ConfigMap", ns, name)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(d)
	return string(b), err
}

func (r *resolver) copySecretData(ns, name string) (string, error) {
	d, err := r.data("Secret", ns, name)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(d)
	return string(b), err
}

const claimAPIVersion = "cluster.open-cluster-management.io/v1alpha1"

func (r *resolver) claim(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%w: a claim name must be given", ErrInvalidInput)
	}
	if err := r.clusterScoped(claimAPIVersion, "ClusterClaim", name); err != nil {
		return "", err
	}
	obj, err := r.get(claimAPIVersion, "ClusterClaim", "", name)
	if err != nil {
		return "", err
	}
	v, _, _ := unstructured.NestedString(obj, "spec", "value")
	return v, nil
}

func (r *resolver) fromClusterClaim(name string) (string, error) {
	v, err := r.claim(name)
	if err != nil {
		return "", fmt.Errorf("failed to get the ClusterClaim %s: %w", name, err)
	}
	return v, nil
}

// lookupClusterClaim is fromClusterClaim that gives "" for a claim that does not exist.
func (r *resolver) lookupClusterClaim(name string) (string, error) {
	v, err := r.claim(name)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	return v, err
}

func (r *resolver) clusterScoped(apiVersion, kind, name string) error {
	if r.opts.Namespace == "" || (r.opts.ClusterScoped != nil && r.opts.ClusterScoped(apiVersion, kind, name)) {
		return nil
	}
	return fmt.Errorf("%w to %s: %s %s is cluster-scoped", ErrRestrictedNamespace, r.opts.Namespace, kind, name)
}

// lookup is the object (an empty map when there is none), or with name "" a map whose items are
// the kind's objects in ns.
func (r *resolver) lookup(apiVersion, kind, ns, name string) (map[string]any, error) {
	if apiVersion == "" || kind == "" {
		return nil, fmt.Errorf("%w: lookup needs an apiVersion and a kind", ErrInvalidInput)
	}
	// A namespace argument names a namespaced kind; "" with Namespace set is the policy's
	// namespace for a namespaced kind and a cluster-scoped read otherwise, which Source decides.
	if ns != "" || r.opts.ClusterScoped == nil || !r.opts.ClusterScoped(apiVersion, kind, name) {
		var err error
		if ns, err = r.namespace(ns); err != nil {
			return nil, err
		}
	} else {
		ns = ""
	}
	src, err := r.source()
	if err != nil {
		return nil, err
	}
	if name == "" {
		items, err := src.List(r.ctx, apiVersion, kind, ns)
		if err != nil {
			return nil, fmt.Errorf("failed to list %s in %q: %w", kind, ns, err)
		}
		list := make([]any, len(items))
		for i := range items {
			list[i] = items[i]
		}
		return map[string]any{"items": list}, nil
	}
	obj, err := src.Get(r.ctx, apiVersion, kind, ns, name)
	if apierrors.IsNotFound(err) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get the %s %s: %w", kind, name, err)
	}
	return obj, nil
}

func base64dec(s string) string {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return ""
	}
	return string(b)
}

// indent indents every line of s by n spaces, less the first line's (it follows the template's
// own position), as OCM's indent does.
func indent(n int, s string) string {
	pad := strings.Repeat(" ", max(n, 0))
	return strings.TrimSpace("\n" + pad + strings.ReplaceAll(s, "\n", "\n"+pad))
}

func toInt(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case int64:
		return int(x)
	case float64:
		return int(x)
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			f, ferr := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if ferr != nil {
				return 0
			}
			return int(f)
		}
		return i
	case bool:
		if x {
			return 1
		}
	}
	return 0
}

func toLiteral(s string) (string, error) {
	if strings.Contains(s, "\n") {
		return "", errors.New("toLiteral: the value has a new line, which a literal may not")
	}
	return s, nil
}

func fromYAML(s string) (map[string]any, error) {
	out := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &out); err != nil {
		return nil, err
	}
	return out, nil
}

func toYAML(v any) (string, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}
