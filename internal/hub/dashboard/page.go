package dashboard

import (
	"encoding/base64"
	"net/http"
	"sort"
	"strings"
)

// Page is one page of a list: its items in a stable order, the token of the next page ("" on the
// last), and how many items follow when the hub says.
type Page[T any] struct {
	Items     []T      `json:"items"`
	Continue  string   `json:"continue,omitempty"`
	Remaining *int64   `json:"remaining,omitempty"`
	Notes     []string `json:"notes,omitempty"`
}

// after pages items, sorted by key, that the dashboard computed in full (the GPU view's, which
// adds up the fleet): the continue token is the last key of the page.
func after[T any](items []T, key func(T) string, q query) ([]T, string, *apiError) {
	sort.SliceStable(items, func(i, j int) bool { return key(items[i]) < key(items[j]) })
	start := 0
	if q.Continue != "" {
		last, err := base64.RawURLEncoding.DecodeString(q.Continue)
		if err != nil || !strings.HasPrefix(string(last), "after:") {
			return nil, "", badParam("continue", "is not a token this dashboard gave: start from the first page, without continue")
		}
		k := strings.TrimPrefix(string(last), "after:")
		start = sort.Search(len(items), func(i int) bool { return key(items[i]) > k })
	}
	end := min(start+int(q.Limit), len(items))
	next := ""
	if end < len(items) {
		next = base64.RawURLEncoding.EncodeToString([]byte("after:" + key(items[end-1])))
	}
	return items[start:end], next, nil
}

// listAnswer writes a page, or the error.
func listAnswer[T any](w http.ResponseWriter, p Page[T], e *apiError) {
	if e != nil {
		writeError(w, e)
		return
	}
	if p.Items == nil {
		p.Items = []T{}
	}
	writeJSON(w, http.StatusOK, p)
}
