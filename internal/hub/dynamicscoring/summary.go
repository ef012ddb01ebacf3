package dynamicscoring

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	dsv1alpha1 "github.com/flotilla/flotilla/api/dynamicscoring/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/scoringwire"
)

// Masked reports whether a mask of masks filters out scoreName for cluster. As OCM contrib's
// hub, a mask names a score that the cluster does not compute.
func Masked(masks []dsv1alpha1.ScoreMask, cluster, scoreName string) bool {
	for _, m := range masks {
		if m.ClusterName == cluster && m.ScoreName == scoreName {
			return true
		}
	}
	return false
}

// Summarize resolves a DynamicScorer into what the agent runs: the configuration it served
// (status.lastSyncedConfig, configSyncMode Full) where set, else its spec; a scoring or source
// host defaults to the scheme and host of spec.configURL, as OCM contrib's hub. It does not
// look at the health status. The error names the missing field and the fix.
func Summarize(s *dsv1alpha1.DynamicScorer) (scoringwire.Summary, error) {
	sum := scoringwire.Summary{Namespace: s.Namespace, Name: s.Name, Location: string(s.Spec.Location),
		ScoreDestination: string(s.Spec.ScoreDestination), ScoreDimensionFormat: s.Spec.ScoreDimensionFormat}
	if sum.ScoreDestination == "" {
		sum.ScoreDestination = string(dsv1alpha1.ScoreDestinationAddOnPlacementScore)
	}
	if sum.ScoreDimensionFormat == "" {
		sum.ScoreDimensionFormat = scoringwire.DefaultDimensionFormat
	}
	var srcType, srcHost, srcPath, scHost, scPath string
	if src := s.Spec.Source; src != nil {
		srcType, srcHost, srcPath = string(src.Type), src.Host, src.Path
		if p := src.Params; p != nil {
			sum.SourceQuery, sum.SourceRange, sum.SourceStep = p.Query, p.Range, p.Step
		}
		if a := src.Auth; a != nil {
			sum.SourceEndpointAuthName, sum.SourceEndpointAuthKey = a.TokenSecretRef.Name, a.TokenSecretRef.Key
		}
	}
	if sc := s.Spec.Scoring; sc != nil {
		scHost, scPath = sc.Host, sc.Path
		if p := sc.Params; p != nil {
			sum.ScoreName, sum.ScoringInterval = p.Name, p.Interval
		}
		if a := sc.Auth; a != nil {
			sum.ScoringEndpointAuthName, sum.ScoringEndpointAuthKey = a.TokenSecretRef.Name, a.TokenSecretRef.Key
		}
	}
	specSrcHost, specScHost := srcHost, scHost
	if c := s.Status.LastSyncedConfig; c != nil && s.Spec.ConfigSyncMode == dsv1alpha1.ConfigSyncModeFull {
		sum.FromConfig = true
		srcType = firstSet(c.Source.Type, srcType)
		srcHost, srcPath = firstSet(c.Source.Host, srcHost), firstSet(c.Source.Path, srcPath)
		sum.SourceQuery = firstSet(c.Source.Params.Query, sum.SourceQuery)
		sum.SourceRange, sum.SourceStep = firstPositive(c.Source.Params.Range, sum.SourceRange), firstPositive(c.Source.Params.Step, sum.SourceStep)
		scHost, scPath = firstSet(c.Scoring.Host, scHost), firstSet(c.Scoring.Path, scPath)
		sum.ScoreName = firstSet(c.Scoring.Params.Name, sum.ScoreName)
		sum.ScoringInterval = firstPositive(c.Scoring.Params.Interval, sum.ScoringInterval)
	}
	ref := fmt.Sprintf("DynamicScorer %s/%s", s.Namespace, s.Name)
	if sum.ScoreName == "" {
		return sum, fmt.Errorf("%s has no score name: set spec.scoring.params.name (or serve scoring.params.name from /config with configSyncMode Full)", ref)
	}
	if sum.ScoringInterval <= 0 {
		return sum, fmt.Errorf("%s has no scoring interval: set spec.scoring.params.interval in seconds", ref)
	}
	// The scorer's /config is not trusted to keep the agent's Durations from wrapping around.
	if sum.ScoringInterval > scoringwire.MaxSeconds {
		return sum, fmt.Errorf("%s: the scoring interval %d seconds is over a year: set %s to at most %d",
			ref, sum.ScoringInterval, sum.Field("scoring.params.interval"), scoringwire.MaxSeconds)
	}
	base := ""
	if u, err := url.Parse(s.Spec.ConfigURL); err == nil && u.Scheme != "" && u.Host != "" {
		base = u.Scheme + "://" + u.Host
	}
	sum.SourceType = firstSet(srcType, string(dsv1alpha1.SourceTypeNone))
	if sum.SourceType == string(dsv1alpha1.SourceTypePrometheus) {
		ep, err := endpoint(firstSet(srcHost, base), firstSet(srcPath, "/api/v1/query_range"))
		if err != nil {
			return sum, fmt.Errorf("%s: spec.source.host: %v; set it to the Prometheus URL, such as http://prometheus.monitoring.svc:9090", ref, err)
		}
		sum.SourceEndpoint = ep
		if sum.SourceQuery == "" {
			return sum, fmt.Errorf("%s has no query: set spec.source.params.query", ref)
		}
		if sum.SourceRange <= 0 || sum.SourceStep <= 0 {
			return sum, fmt.Errorf("%s: set spec.source.params.range and step (seconds, at least 1)", ref)
		}
		if sum.SourceRange > scoringwire.MaxSeconds || sum.SourceStep > scoringwire.MaxSeconds {
			return sum, fmt.Errorf("%s: the source range %d or step %d seconds is over a year: set %s and step to at most %d",
				ref, sum.SourceRange, sum.SourceStep, sum.Field("source.params.range"), scoringwire.MaxSeconds)
		}
	}
	ep, err := endpoint(firstSet(scHost, base), firstSet(scPath, dsv1alpha1.DefaultScoringPath))
	if err != nil {
		return sum, fmt.Errorf("%s: spec.scoring.host: %v; set it (or spec.configURL, whose host it defaults to) to the scorer's URL", ref, err)
	}
	sum.ScoringEndpoint = ep
	return sum, tokenOrigins(sum, firstSet(specSrcHost, base), firstSet(specScHost, base), ref)
}

// tokenOrigins refuses a token that would go to a host other than the one the DynamicScorer's
// own spec names (specSrc, specScoring), never to one its /config serves: whoever runs the
// scorer would otherwise choose where agents send a Secret.
func tokenOrigins(sum scoringwire.Summary, specSrc, specScoring, ref string) error {
	if sum.SourceType == string(dsv1alpha1.SourceTypePrometheus) && sum.SourceEndpointAuthName != "" {
		if err := sameOrigin(sum.SourceEndpoint, specSrc); err != nil {
			return fmt.Errorf("%s: spec.source.auth.tokenSecretRef: the token would go to %v, the host its /config serves as source.host; "+
				"set spec.source.host to that host if you trust it, or serve no source.host from /config", ref, err)
		}
	}
	if sum.ScoringEndpointAuthName != "" {
		if err := sameOrigin(sum.ScoringEndpoint, specScoring); err != nil {
			return fmt.Errorf("%s: spec.scoring.auth.tokenSecretRef: the token would go to %v, the host its /config serves as scoring.host; "+
				"set spec.scoring.host to that host if you trust it, or serve no scoring.host from /config", ref, err)
		}
	}
	return nil
}

// sameOrigin says where endpoint goes when its scheme and host are not those of want.
func sameOrigin(endpoint, want string) error {
	e, err := url.Parse(endpoint)
	if err != nil {
		return err
	}
	w, err := url.Parse(want)
	if err != nil || w.Scheme == "" || w.Host == "" {
		return fmt.Errorf("%s, while the spec names no host", e.Scheme+"://"+e.Host)
	}
	if !strings.EqualFold(e.Scheme, w.Scheme) || !strings.EqualFold(e.Host, w.Host) {
		return fmt.Errorf("%s, not %s", e.Scheme+"://"+e.Host, w.Scheme+"://"+w.Host)
	}
	return nil
}

// BuildSummaries lists what the agent of cluster runs: the Active scorers, resolved, that no
// mask of their namespace filters out, sorted by score name. Scorers that cannot be resolved
// are left out; problems gives why, by scorer.
func BuildSummaries(cluster string, scorers []dsv1alpha1.DynamicScorer, masks map[string][]dsv1alpha1.ScoreMask) (out []scoringwire.Summary, problems map[string]error) {
	problems = map[string]error{}
	seen := map[string]string{}
	for i := range scorers {
		s := &scorers[i]
		if s.Status.HealthStatus != dsv1alpha1.ScorerHealthActive || !s.DeletionTimestamp.IsZero() {
			continue
		}
		sum, err := Summarize(s)
		key := s.Namespace + "/" + s.Name
		if err != nil {
			problems[key] = err
			continue
		}
		if Masked(masks[s.Namespace], cluster, sum.ScoreName) {
			continue
		}
		if other, dup := seen[sum.ScoreName]; dup {
			problems[key] = fmt.Errorf("DynamicScorer %s has the score name %q of DynamicScorer %s: set a unique spec.scoring.params.name", key, sum.ScoreName, other)
			continue
		}
		seen[sum.ScoreName] = key
		out = append(out, sum)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ScoreName < out[j].ScoreName })
	return out, problems
}

func endpoint(host, path string) (string, error) {
	if host == "" {
		return "", fmt.Errorf("empty, and spec.configURL gives no host either")
	}
	u, err := url.Parse(host)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute URL", host)
	}
	// A host the agent's HTTP client would read otherwise than the hub does: "a://:" dials this
	// machine, and "a://::" (an IPv6 address without brackets) becomes the host ":".
	if u.Hostname() == "" || (strings.Count(u.Host, ":") > 1 && !strings.HasPrefix(u.Host, "[")) {
		return "", fmt.Errorf("%q names no host name (an IPv6 address goes in brackets, such as http://[fd00::1]:9090)", host)
	}
	return url.JoinPath(host, path)
}

func firstSet(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func firstPositive(a, b int64) int64 {
	if a > 0 {
		return a
	}
	return b
}
