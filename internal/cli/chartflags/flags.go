package chartflags

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"helm.sh/helm/v4/pkg/strvals"

	"github.com/flotilla/flotilla/internal/version"
)

// Flags are the install mode's flags.
type Flags struct {
	Namespace  string
	Image      string
	PullPolicy string
	Sets       []string
	Wait       time.Duration
	Upgrade    bool
	// RollbackOnFailure removes a failed first install and returns a failed upgrade to the
	// version before (Helm's --rollback-on-failure); on by default.
	RollbackOnFailure bool
}

// AddFlags adds the flags, for the part ("hub" or "agent") installed in namespace by default.
func (f *Flags) AddFlags(fs *pflag.FlagSet, part, namespace string) {
	fs.StringVar(&f.Namespace, "namespace", namespace, "with --install: the namespace of the "+part)
	fs.StringVar(&f.Image, "image", "", "with --install: the image, REPOSITORY[:TAG] (default: the chart's, tagged with this binary's version)")
	fs.StringVar(&f.PullPolicy, "image-pull-policy", "", "with --install: Always, IfNotPresent or Never (Never for an image loaded with kind load image-archive)")
	fs.StringArrayVar(&f.Sets, "set", nil, "with --install: a chart value, KEY=VALUE as helm --set takes it (repeatable; the chart's README lists them)")
	fs.DurationVar(&f.Wait, "wait", 5*time.Minute, "with --install: how long to wait for the "+part+" to be ready (0: do not wait)")
	fs.BoolVar(&f.Upgrade, "upgrade", false, "with --install: replace a Flotilla "+part+" of another version")
	fs.BoolVar(&f.RollbackOnFailure, "rollback-on-failure", true, "with --install: when the "+part+" does not turn ready, remove what a first install added or return an upgrade to the version before (false: leave it for inspection)")
}

// Values turns the flags into chart values over base; --set wins, parsed as `helm --set` does.
func (f Flags) Values(base map[string]any) (map[string]any, error) {
	vals := map[string]any{}
	for k, v := range base {
		vals[k] = v
	}
	image := map[string]any{}
	if f.Image != "" {
		repo, tag := SplitImage(f.Image)
		image["repository"] = repo
		if tag != "" {
			image["tag"] = tag
		}
	} else if version.Version != "dev" {
		image["tag"] = version.Version
	}
	if f.PullPolicy != "" {
		image["pullPolicy"] = f.PullPolicy
	}
	if len(image) > 0 {
		vals["image"] = image
	}
	for _, s := range f.Sets {
		if err := strvals.ParseInto(s, vals); err != nil {
			return nil, fmt.Errorf("--set %q: %w; give KEY=VALUE as helm --set takes it, such as replicas=3", s, err)
		}
	}
	return vals, nil
}

// SplitImage splits REPOSITORY[:TAG]; a registry's port is not a tag.
func SplitImage(ref string) (repo, tag string) {
	for i := len(ref) - 1; i >= 0; i-- {
		switch ref[i] {
		case ':':
			return ref[:i], ref[i+1:]
		case '/':
			return ref, ""
		}
	}
	return ref, ""
}
