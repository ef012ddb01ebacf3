package dynamicscoring

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
)

func TestFormatDimension(t *testing.T) {
	metric := map[string]string{"node": "n1", "namespace": "ml", "app": "train", "device": "gpu0"}
	for name, tc := range map[string]struct {
		format string
		want   string
	}{
		"default is the score name": {format: "", want: "gpu"},
		"cluster and node":          {format: "${cluster}-${node}", want: "c1-n1"},
		"OCM's example":             {format: "resource-usage-${cluster}-${namespace}-${app}", want: "resource-usage-c1-ml-train"},
		"missing label is empty":    {format: "${scoreName}-${pod}", want: "gpu-"},
		"no placeholder":            {format: "fixed", want: "fixed"},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, FormatDimension(tc.format, "c1", "gpu", metric)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestResourceName(t *testing.T) {
	for in, want := range map[string]string{
		"gpu-util": "gpu-util", "GPU_Util": "gpu-util", "--a..b--": "a.b", "___": "score", "": "score",
		"a.-b": "a.b", "a-.b": "a.b", "00a. 000": "00a.000", "x.y.z": "x.y.z", strings.Repeat("a", 252) + ".b": strings.Repeat("a", 252),
	} {
		if diff := cmp.Diff(want, ResourceName(in)); diff != "" {
			t.Errorf("ResourceName(%q) (-want +got):\n%s", in, diff)
		}
	}
}

func TestParseScores(t *testing.T) {
	type item = clusterv1alpha1.AddOnPlacementScoreItem
	for name, tc := range map[string]struct {
		body, format string
		want         []item
		wantReason   string
	}{
		"scores by node, rounded and sorted": {body: `{"results":[{"metric":{"node":"b"},"score":10.6},{"metric":{"node":"a"},"score":-100}]}`,
			format: "${node}", want: []item{{Name: "a", Value: -100}, {Name: "b", Value: 11}}},
		"no results is no scores":  {body: `{"results":[]}`, want: []item{}},
		"not JSON":                 {body: `{"results":`, wantReason: ReasonScorerMalformed},
		"no results list":          {body: `{"scores":[]}`, wantReason: ReasonScorerMalformed},
		"score not a number":       {body: `{"results":[{"metric":{},"score":"high"}]}`, wantReason: ReasonScorerMalformed},
		"score missing":            {body: `{"results":[{"metric":{}}]}`, wantReason: ReasonScorerMalformed},
		"above 100":                {body: `{"results":[{"metric":{},"score":100.6}]}`, wantReason: ReasonScoreOutOfRange},
		"below -100":               {body: `{"results":[{"metric":{},"score":-101}]}`, wantReason: ReasonScoreOutOfRange},
		"two results of one name":  {body: `{"results":[{"metric":{"node":"a"},"score":1},{"metric":{"node":"b"},"score":2}]}`, wantReason: ReasonScorerMalformed},
		"empty name from a format": {body: `{"results":[{"metric":{},"score":1}]}`, format: "${node}", wantReason: ReasonScorerMalformed},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseScores([]byte(tc.body), tc.format, "c1", "gpu")
			var re *ResponseError
			reason := ""
			if errors.As(err, &re) {
				reason = re.Reason
			} else if err != nil {
				t.Fatalf("error %v is not a ResponseError", err)
			}
			if diff := cmp.Diff(tc.wantReason, reason); diff != "" {
				t.Errorf("reason (-want +got):\n%s (error %v)", diff, err)
			}
			if diff := cmp.Diff(tc.want, got); tc.wantReason == "" && diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseMatrix(t *testing.T) {
	for name, tc := range map[string]struct {
		status  int
		body    string
		want    []Series
		wantErr bool
	}{
		"matrix": {status: 200, body: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"gpu":"0"},"values":[[1,"5"]]}]}}`,
			want: []Series{{Metric: map[string]string{"gpu": "0"}, Values: [][2]any{{1.0, "5"}}}}},
		"bad query":   {status: 400, body: `{"status":"error","errorType":"bad_data","error":"parse error"}`, wantErr: true},
		"not the API": {status: 404, body: `404 page not found`, wantErr: true},
		"a vector":    {status: 200, body: `{"status":"success","data":{"resultType":"vector","result":[]}}`, wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseMatrix(tc.status, []byte(tc.body))
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestQueries(t *testing.T) {
	if diff := cmp.Diff([]string{"a", "b"}, Queries(" a ; ;b;")); diff != "" {
		t.Errorf("Queries (-want +got):\n%s", diff)
	}
}
