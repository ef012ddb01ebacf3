package dynamicscoring

import (
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/scoringwire"
)

// FuzzParseScores feeds the decoder of a scoring API's answer arbitrary bodies and dimension
// formats, as a remote scorer and a DynamicScorer's author may send them. It must never panic;
// an answer it refuses is a ResponseError with a Scored reason; scores it accepts lie within
// OCM's -100..100, have unique non-empty names of at most 512 characters, and are sorted.
func FuzzParseScores(f *testing.F) {
	for _, seed := range []struct{ body, format string }{
		{`{"results":[{"metric":{"node":"b"},"score":10.6},{"metric":{"node":"a"},"score":-100}]}`, "${node}"},
		{`{"results":[]}`, ""},
		{`{"results":[{"metric":{"node":"a"},"score":100.4999}]}`, "${cluster}-${scoreName}-${node}"},
		{`{"results":[{"metric":{},"score":100.5}]}`, ""},
		{`{"results":[{"metric":{},"score":-100.5}]}`, ""},
		{`{"results":[{"metric":{},"score":1e308}]}`, ""},
		{`{"results":[{"metric":{},"score":1e999}]}`, ""},
		{`{"results":[{"metric":{},"score":"NaN"}]}`, ""},
		{`{"results":[{"metric":{},"score":null}]}`, ""},
		{`{"results":[{"metric":null,"score":1}]}`, "${meta}"},
		{`{"results":[{"metric":{"node":1},"score":1}]}`, "${node}"},
		{`{"results":[{"score":1},{"score":2}]}`, "x"},
		{`{"results":null}`, ""},
		{`{"results":{}}`, ""},
		{`[]`, ""},
		{`null`, ""},
		{`{"results":[{"metric":{"node":"a"},"score":1}],"results":[]}`, "${node}"},
		{``, ""},
		{`{`, ""},
	} {
		f.Add([]byte(seed.body), seed.format)
	}
	f.Fuzz(func(t *testing.T, body []byte, format string) {
		got, err := ParseScores(body, format, "c1", "gpu")
		if err != nil {
			var re *ResponseError
			if !errors.As(err, &re) {
				t.Fatalf("ParseScores failed with %T %v, want a *ResponseError", err, err)
			}
			if re.Reason != ReasonScorerMalformed && re.Reason != ReasonScoreOutOfRange {
				t.Fatalf("ParseScores failed with reason %q: %v", re.Reason, err)
			}
			if got != nil {
				t.Fatalf("ParseScores returned scores and an error: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, s := range got {
			if s.Value < clusterv1alpha1.MinScore || s.Value > clusterv1alpha1.MaxScore {
				t.Fatalf("ParseScores accepted score %q = %d, outside %d..%d", s.Name, s.Value, clusterv1alpha1.MinScore, clusterv1alpha1.MaxScore)
			}
			if s.Name == "" || len(s.Name) > 512 || seen[s.Name] {
				t.Fatalf("ParseScores accepted an empty, over-long or repeated score name %q in %v", s.Name, got)
			}
			seen[s.Name] = true
		}
		if !sort.SliceIsSorted(got, func(i, j int) bool { return got[i].Name < got[j].Name }) {
			t.Fatalf("ParseScores returned unsorted scores %v", got)
		}
	})
}

// FuzzParseMatrix feeds the decoder of a Prometheus range query's answer arbitrary bodies, as
// the source a DynamicScorer names may send them. It must never panic, and the series it
// accepts must encode into the scoring request the agent POSTs.
func FuzzParseMatrix(f *testing.F) {
	for _, seed := range []string{
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"node":"n1"},"values":[[1700000000,"0.5"],[1700000060,"1"]]}]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"1"]}]}}`,
		`{"status":"error","errorType":"bad_data","error":"parse error at char 4"}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,2,3]]}]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[{"a":[1]},null]]}]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":1}}]}}`,
		`<html>502 Bad Gateway</html>`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		series, err := ParseMatrix(200, body)
		if err != nil {
			return
		}
		if _, err := json.Marshal(ScoringRequest{Data: series}); err != nil {
			t.Fatalf("ParseMatrix accepted series the scoring request cannot carry: %v", err)
		}
	})
}

// FuzzResourceName feeds the AddOnPlacementScore's naming arbitrary score names, as a
// DynamicScorer's author or its scorer's /config may serve them. The name must be one the API
// server accepts for an object.
func FuzzResourceName(f *testing.F) {
	for _, seed := range []string{"gpu-util", "GPU_Util", "--a..b--", "a.-b", "a-.b", "___", "", "é", "a/b", "x.y.z", strings.Repeat("a", 252) + ".-b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, scoreName string) {
		name := ResourceName(scoreName)
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			t.Fatalf("ResourceName(%q) = %q, which the API server refuses as a name: %v", scoreName, name, errs)
		}
	})
}

// FuzzSummaries feeds the agent's reading of the hub's dynamic-scoring-config ConfigMap
// arbitrary data. It must never panic, and every scorer it runs gets a positive interval whose
// validity (ValidIntervals intervals) is positive too: a ticker panics on a non-positive one,
// and a wrapped-around validUntil would expire a score as it is written.
func FuzzSummaries(f *testing.F) {
	for _, seed := range []string{
		`[]`,
		`[{"namespace":"ns","name":"s","scoreName":"gpu","sourceType":"None","scoringEndpoint":"http://scorer:8080/score","scoringInterval":30,"location":"External","scoreDestination":"AddOnPlacementScore","scoreDimensionFormat":"${node}"}]`,
		`[{"name":"s","scoreName":"gpu","scoringInterval":0}]`,
		`[{"name":"s","scoreName":"gpu","scoringInterval":-5}]`,
		`[{"name":"s","scoreName":"gpu","scoringInterval":9223372036854775807}]`,
		`[{"name":"s","scoreName":"gpu","scoringInterval":9223372037}]`,
		`[{"name":"s","scoreName":"gpu","scoringInterval":3074457346}]`,
		`[{"name":"s","scoringInterval":1e3}]`,
		`[{"name":"s","sourceRange":9223372036854775807,"sourceStep":-1}]`,
		`null`,
		`{}`,
		``,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		ss, err := scoringwire.DecodeSummaries(map[string]string{scoringwire.SummariesKey: data})
		if err != nil {
			return
		}
		for _, s := range ss {
			if d := interval(s); d <= 0 || ValidIntervals*d <= 0 {
				t.Fatalf("scoringInterval %d gives the interval %v and validity %v, want both positive", s.ScoringInterval, d, ValidIntervals*d)
			}
		}
	})
}
