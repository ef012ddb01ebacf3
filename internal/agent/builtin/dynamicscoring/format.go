package dynamicscoring

import (
	"regexp"
	"strings"

	"github.com/flotilla/flotilla/internal/contract/scoringwire"
)

// metricPlaceholders are the placeholders filled from a result's metric labels.
var metricPlaceholders = []string{"node", "device", "namespace", "app", "pod", "container", "meta"}

// FormatDimension is a score's name: format with ${cluster} the agent's cluster, ${scoreName}
// the scorer's score name and ${node}, ${device}, ${namespace}, ${app}, ${pod}, ${container},
// ${meta} the result's metric labels ("" when absent).
func FormatDimension(format, cluster, scoreName string, metric map[string]string) string {
	if format == "" {
		format = scoringwire.DefaultDimensionFormat
	}
	pairs := []string{"${cluster}", cluster, "${scoreName}", scoreName}
	for _, p := range metricPlaceholders {
		pairs = append(pairs, "${"+p+"}", metric[p])
	}
	return strings.NewReplacer(pairs...).Replace(format)
}

var (
	invalidName = regexp.MustCompile(`[^a-z0-9.-]+`)
	dashes      = regexp.MustCompile(`-+`)
)

// ResourceName is the AddOnPlacementScore's name for a score name, as OCM contrib's agent: lower
// case, runs of other characters than [a-z0-9.-] made one dash, trimmed to 253 characters that
// begin and end alphanumeric; "score" when nothing is left. The name is a DNS subdomain, as the
// API server requires of an object's name: every dot-separated label begins and ends
// alphanumeric, so empty labels ("a..b") are dropped and dashes next to a dot ("a.-b") trimmed.
// A name that already is a DNS subdomain is kept as it is.
func ResourceName(scoreName string) string {
	s := invalidName.ReplaceAllString(strings.ToLower(scoreName), "-")
	s = dashes.ReplaceAllString(s, "-")
	s = labels(s)
	if len(s) > 253 {
		s = labels(s[:253])
	}
	if s == "" {
		return "score"
	}
	return s
}

// labels joins the non-empty dot-separated labels of s, each trimmed of dashes.
func labels(s string) string {
	var out []string
	for _, l := range strings.Split(s, ".") {
		if l = strings.Trim(l, "-"); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, ".")
}
