package dashboard

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseQuery(t *testing.T) {
	for name, tc := range map[string]struct {
		query   string
		want    query
		wantErr string
	}{
		"defaults":       {query: "", want: query{Limit: DefaultLimit}},
		"all":            {query: "limit=5&continue=abc&namespace=ml&labelSelector=gpu%3Dtrue&view=fleet", want: query{Limit: 5, Continue: "abc", Namespace: "ml", View: "fleet"}},
		"limit at max":   {query: "limit=500", want: query{Limit: MaxLimit}},
		"limit over max": {query: "limit=501", wantErr: `parameter "limit": 501 is more than the 500 a page may hold`},
		"limit zero":     {query: "limit=0", wantErr: `parameter "limit": 0 is less than 1`},
		"limit word":     {query: "limit=ten", wantErr: `parameter "limit": "ten" is not a whole number`},
		"unknown":        {query: "limit=1&sort=name", wantErr: `unknown parameter "sort": this route takes limit, continue, namespace, labelSelector, view, cluster`},
		"twice":          {query: "limit=1&limit=2", wantErr: `parameter "limit": given 2 times`},
		"namespace":      {query: "namespace=Not_A_NS", wantErr: `parameter "namespace": "Not_A_NS" is not a namespace`},
		"selector":       {query: "labelSelector=a%3D%3D%3D", wantErr: `parameter "labelSelector": "a===" is not a label selector`},
		"view":           {query: "view=nope", wantErr: `parameter "view": "nope" is not a view: give one of fleet, gpus, placements, works, addons, jobs`},
		"cluster":        {query: "cluster=gpu-east-1", want: query{Limit: DefaultLimit, Cluster: "gpu-east-1"}},
		"bad cluster":    {query: "cluster=GPU%20east", wantErr: `parameter "cluster": "GPU east" is not a cluster's name`},
		"continue space": {query: "continue=a%20b", wantErr: `parameter "continue": is not a token this dashboard gave`},
	} {
		t.Run(name, func(t *testing.T) {
			v, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			got, e := parseQuery(v, "limit", "continue", "namespace", "labelSelector", "view", "cluster")
			if tc.wantErr != "" {
				if e == nil || e.Code != 400 || !strings.Contains(e.Message, tc.wantErr) {
					t.Fatalf("parseQuery(%q) = %v, want a 400 containing %q", tc.query, e, tc.wantErr)
				}
				return
			}
			if e != nil {
				t.Fatalf("parseQuery(%q): %v", tc.query, e)
			}
			sel := got.LabelSelector.String()
			got.LabelSelector = nil
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(query{})); diff != "" {
				t.Errorf("parseQuery(%q) (-want +got):\n%s", tc.query, diff)
			}
			if name == "all" && sel != "gpu=true" {
				t.Errorf("labelSelector = %q, want gpu=true", sel)
			}
		})
	}
}

func TestAfter(t *testing.T) {
	items := []string{"d", "a", "c", "b", "e"}
	id := func(s string) string { return s }
	var got [][]string
	q := query{Limit: 2}
	for range 10 {
		page, next, e := after(append([]string(nil), items...), id, q)
		if e != nil {
			t.Fatal(e)
		}
		got = append(got, page)
		if next == "" {
			break
		}
		q.Continue = next
	}
	if diff := cmp.Diff([][]string{{"a", "b"}, {"c", "d"}, {"e"}}, got); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	if _, _, e := after(items, id, query{Limit: 2, Continue: "bm90IG91cnM"}); e == nil || !strings.Contains(e.Message, `parameter "continue"`) {
		t.Errorf("a token the dashboard did not give: %v, want a 400 naming continue", e)
	}
}
