package kubeflags

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/homedir"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/api/scheme"
)

// EnvVar lists the kubeconfig files to merge when --kubeconfig is not given.
const EnvVar = clientcmd.RecommendedConfigPathEnvVar

// Flags select a kubeconfig and a context in it.
type Flags struct {
	// Kubeconfig is the file of --kubeconfig; empty means $KUBECONFIG, else ~/.kube/config.
	Kubeconfig string
	// Context is --context; empty means the kubeconfig's current context.
	Context string
}

// AddFlags adds --kubeconfig and --context to fs; cluster says whose kubeconfig it is, such as
// "the hub cluster".
func (f *Flags) AddFlags(fs *pflag.FlagSet, cluster string) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig of "+cluster+" (default: the files in $"+EnvVar+", else ~/.kube/config, else a pod's in-cluster configuration)")
	fs.StringVar(&f.Context, "context", "", "context of the kubeconfig to use (default: its current context)")
}

// Args are the flags that select the same kubeconfig and context again, for commands that print
// a command to run next; empty when the defaults selected them.
func (f Flags) Args() string {
	var args []string
	if f.Kubeconfig != "" {
		args = append(args, "--kubeconfig "+quote(f.Kubeconfig))
	}
	if f.Context != "" {
		args = append(args, "--context "+quote(f.Context))
	}
	return strings.Join(args, " ")
}

// Loaded is a client configuration and where it came from.
type Loaded struct {
	Config *rest.Config
	// Namespace is the context's namespace, "default" when it names none, as kubectl uses it.
	Namespace string
	// Context is the context used; empty for the in-cluster configuration.
	Context string
	// Source names where the configuration came from, for messages: the --kubeconfig file,
	// the $KUBECONFIG files, ~/.kube/config or the in-cluster configuration.
	Source string
}

// Load finds the kubeconfig as kubectl does and returns the client configuration of its context.
func (f Flags) Load() (*Loaded, error) {
	rules, src := f.rules()
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.Context})
	raw, err := cc.RawConfig()
	switch {
	case err != nil && f.Kubeconfig != "" && errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("--kubeconfig %s: no such file: pass an existing kubeconfig, or leave --kubeconfig out to use $%s or ~/.kube/config", f.Kubeconfig, EnvVar)
	case err != nil:
		return nil, fmt.Errorf("loading the kubeconfig %s: %w: fix the file or pass another with --kubeconfig", src.describe(), err)
	}
	if clientcmdapi.IsConfigEmpty(&raw) {
		// Nothing found: a pod's in-cluster configuration, as kubectl falls back to.
		cfg, err := cc.ClientConfig()
		if err != nil {
			if clientcmd.IsEmptyConfig(err) {
				return nil, fmt.Errorf("no kubeconfig: set --kubeconfig, $%s or ~/.kube/config (tried %s; not running in a cluster)", EnvVar, src.tried())
			}
			return nil, fmt.Errorf("loading the in-cluster configuration (no kubeconfig in %s): %w", src.tried(), err)
		}
		namespace, _, err := cc.Namespace()
		if err != nil {
			return nil, fmt.Errorf("reading the in-cluster namespace: %w", err)
		}
		return &Loaded{Config: cfg, Namespace: namespace, Source: "the in-cluster configuration"}, nil
	}
	contextName := f.Context
	if contextName == "" {
		contextName = raw.CurrentContext
	}
	switch _, ok := raw.Contexts[contextName]; {
	case f.Context != "" && !ok:
		return nil, fmt.Errorf("the kubeconfig %s has no context %q: pass one of its contexts (%s) with --context",
			src.describe(), f.Context, contextNames(raw))
	case contextName == "":
		return nil, fmt.Errorf("the kubeconfig %s names no current context: pass one of its contexts (%s) with --context, or set one with `kubectl config use-context`",
			src.describe(), contextNames(raw))
	case !ok:
		return nil, fmt.Errorf("the kubeconfig %s names current context %q, which it does not define: pass one of its contexts (%s) with --context",
			src.describe(), contextName, contextNames(raw))
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig %s, context %q, is not usable: %w", src.describe(), contextName, err)
	}
	namespace, _, err := cc.Namespace()
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig %s, context %q: reading its namespace: %w", src.describe(), contextName, err)
	}
	return &Loaded{Config: cfg, Namespace: namespace, Context: contextName, Source: src.describe()}, nil
}

// source is where the loading rules look, for messages.
type source struct {
	flag string   // --kubeconfig
	env  []string // $KUBECONFIG, when set and --kubeconfig is not
	home string   // ~/.kube/config, when neither is set
}

// rules are clientcmd's loading rules with precedence flag > $KUBECONFIG > ~/.kube/config. They
// are built at each call rather than by clientcmd.NewDefaultClientConfigLoadingRules, which reads
// the home folder once when the program starts.
func (f Flags) rules() (*clientcmd.ClientConfigLoadingRules, source) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: f.Kubeconfig}
	switch env := os.Getenv(EnvVar); {
	case f.Kubeconfig != "":
		return rules, source{flag: f.Kubeconfig}
	case env != "":
		var files []string
		for _, p := range filepath.SplitList(env) {
			if p != "" {
				files = append(files, p)
			}
		}
		rules.Precedence = files
		return rules, source{env: files}
	default:
		home := filepath.Join(homedir.HomeDir(), clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)
		rules.Precedence = []string{home}
		return rules, source{home: home}
	}
}

func (s source) describe() string {
	switch {
	case s.flag != "":
		return s.flag
	case len(s.env) == 1:
		return s.env[0] + " (from $" + EnvVar + ")"
	case len(s.env) > 1:
		return "$" + EnvVar + " (" + strings.Join(s.env, ", ") + ")"
	default:
		return s.home
	}
}

// tried says what was looked for and why it gave no configuration, when nothing was found.
func (s source) tried() string {
	files, where := []string{s.home}, ""
	if len(s.env) > 0 {
		files, where = s.env, "$"+EnvVar+": "
	}
	var out []string
	for _, f := range files {
		if _, err := os.Stat(f); errors.Is(err, fs.ErrNotExist) {
			out = append(out, f+" (no such file)")
		} else {
			out = append(out, f+" (empty)")
		}
	}
	if len(s.env) == 0 {
		out = append(out, "$"+EnvVar+" is not set")
	}
	return where + strings.Join(out, ", ")
}

func contextNames(c clientcmdapi.Config) string {
	if len(c.Contexts) == 0 {
		return "it defines none"
	}
	names := make([]string, 0, len(c.Contexts))
	for name := range c.Contexts {
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// quote quotes s for a shell when it needs it.
func quote(s string) string {
	if s != "" && strings.IndexFunc(s, needsQuote) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func needsQuote(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	default:
		return !strings.ContainsRune("-_./:@%+=,", r)
	}
}

// ReaderFunc builds a reader of the hub from the kubeconfig the flags select, and says where that
// configuration came from (with its context's namespace). NewHubReader is one; tests pass fakes.
type ReaderFunc func(f Flags) (client.Reader, *Loaded, error)

// NewHubReader loads the kubeconfig the flags name and returns a client of that cluster (the
// hub) that knows every Flotilla kind, with what was loaded. It is what the read-only verbs (get,
// explain, describe) use.
func NewHubReader(f Flags) (client.Reader, *Loaded, error) {
	hub, err := f.Load()
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(hub.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, nil, fmt.Errorf("creating a client of the hub of kubeconfig %s: %w", hub.Source, err)
	}
	return c, hub, nil
}
