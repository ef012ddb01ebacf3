package dashboard

import (
	"io/fs"
	"net/http"
	"strings"
)

const missingAssets = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Flotilla dashboard</title></head>
<body><main><h1>Flotilla dashboard</h1>
<p>This binary was built without the dashboard's web assets. Build it with <code>make build</code>, which runs
<code>npm ci &amp;&amp; npm run build</code> in web/dashboard before <code>go build</code>. The API under /api/ works.</p>
</main></body></html>
`

// index serves the app's index.html for every page of the app, so that its own routes load.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-cache")
	var page []byte
	if s.o.Assets != nil {
		page, _ = fs.ReadFile(s.o.Assets, "index.html")
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if page == nil {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(missingAssets))
		return
	}
	_, _ = w.Write(page)
}

// asset serves the app's built files, whose names hold their content's hash.
func (s *Server) asset(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/")
	if s.o.Assets == nil || !fs.ValidPath(name) {
		http.NotFound(w, r)
		return
	}
	if _, err := fs.Stat(s.o.Assets, name); err != nil {
		http.Error(w, "404: no asset "+r.URL.Path+": reload the dashboard", http.StatusNotFound)
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	http.ServeFileFS(w, r, s.o.Assets, name)
}
