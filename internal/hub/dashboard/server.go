package dashboard

import (
	"context"
	"io/fs"
	"net"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/api/scheme"
)

// Options configure the dashboard.
type Options struct {
	// Identity turns each request into the viewer's configuration.
	Identity Identity
	// Mapper maps kinds to resources. It holds only what the API server's discovery says, which
	// every authenticated user may read; it reads no objects.
	Mapper meta.RESTMapper
	// Clock dates heartbeats and ages, and paces live updates.
	Clock clock.WithTicker
	// Assets is the built single-page app (index.html and assets/); without index.html the
	// dashboard serves a page saying the binary was built without it.
	Assets fs.FS
	// AllowedHost, when set, refuses requests whose Host it returns false for: `flotilla
	// dashboard` accepts only loopback names, so another site cannot reach it by DNS rebinding.
	AllowedHost func(host string) bool
	// History, when set, is the fleet's GPU totals over time (GET /api/gpus/history); whoever
	// makes the Server starts it.
	History *History
}

// Server is the dashboard's handler.
type Server struct {
	o   Options
	mux *http.ServeMux
}

// views are the pages of the app (the paths it routes itself) and what each watches.
var views = map[string]bool{"fleet": true, "gpus": true, "placements": true, "works": true, "addons": true, "jobs": true, "queues": true, "policies": true}

// streams are what /api/events?view= takes: every view, and "timeline", a cluster's page
// (/fleet/NAME).
var streams = map[string]bool{"fleet": true, "gpus": true, "placements": true, "works": true, "addons": true, "jobs": true, "queues": true, "policies": true, "timeline": true}

func viewNames() []string {
	return []string{"fleet", "gpus", "placements", "works", "addons", "jobs", "queues", "policies", "timeline"}
}

// New returns the dashboard's handler.
func New(o Options) *Server {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	s := &Server{o: o, mux: http.NewServeMux()}
	api := map[string]http.HandlerFunc{
		"GET /api/clusters":                                s.clusters,
		"GET /api/clusters/{name}/timeline":                s.timeline,
		"GET /api/gpus":                                    s.gpus,
		"GET /api/gpus/history":                            s.gpuHistory,
		"GET /api/placements":                              s.placements,
		"GET /api/placements/{ns}/{name}":                  s.explain,
		"POST /api/placements/{ns}/{name}/simulate":        s.simulate,
		"GET /api/works":                                   s.works,
		"GET /api/workreplicasets":                         s.workReplicaSets,
		"GET /api/addons":                                  s.addons,
		"GET /api/jobs":                                    s.jobs,
		"GET /api/jobs/{ns}/{name}":                        s.job,
		"GET /api/queues":                                  s.queues,
		"GET /api/policies":                                s.policies,
		"GET /api/policies/{ns}/{name}/clusters/{cluster}": s.policyOnCluster,
		"GET /api/events":                                  s.events,
		"GET /api/whoami":                                  s.whoami,
	}
	for pattern, h := range api {
		s.mux.HandleFunc(pattern, h)
	}
	s.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, notFound("no API route %s %s: the dashboard serves GET /api/clusters, /api/clusters/NAME/timeline, /api/gpus, /api/gpus/history, /api/placements, "+
			"/api/placements/NAMESPACE/NAME, /api/works, /api/workreplicasets, /api/addons, /api/jobs, /api/jobs/NAMESPACE/NAME, /api/queues, /api/policies, "+
			"/api/policies/NAMESPACE/NAME/clusters/CLUSTER, /api/events and "+
			"POST /api/placements/NAMESPACE/NAME/simulate", r.Method, r.URL.Path))
	})
	s.mux.HandleFunc("GET /login", s.loginPage)
	s.mux.HandleFunc("POST /login", s.login)
	s.mux.HandleFunc("POST /logout", s.logout)
	s.mux.HandleFunc("GET /assets/", s.asset)
	s.mux.HandleFunc("GET /{$}", s.index)
	for v := range views {
		s.mux.HandleFunc("GET /"+v, s.index)
		s.mux.HandleFunc("GET /"+v+"/", s.index)
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "404: the dashboard has no page "+r.URL.Path+": start from /", http.StatusNotFound)
	})
	return s
}

// ServeHTTP checks the Host and, for changes, the Origin, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: under no-referrer browsers send "Origin: null" with the login
	// form's POST, which the Origin check below must refuse.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	if s.o.AllowedHost != nil && !s.o.AllowedHost(hostOnly(r.Host)) {
		http.Error(w, "403: host "+r.Host+" is not allowed: open the dashboard at the loopback URL flotilla dashboard printed", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
			http.Error(w, "403: a request from origin "+o+" may not change anything here: use the dashboard's own pages", http.StatusForbidden)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// hostOnly is host without its port.
func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.Trim(host, "[]")
}

func sameOrigin(origin, host string) bool {
	_, rest, ok := strings.Cut(origin, "://")
	return ok && rest == host
}

// Loopback says whether host names this machine's loopback interface: localhost, 127.0.0.0/8 or
// ::1. `flotilla dashboard` accepts only these as Host.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// client is a client of the hub with the viewer's identity, or the error to answer.
func (s *Server) client(r *http.Request) (client.WithWatch, *apiError) {
	cfg, err := s.o.Identity.Config(r)
	if err != nil {
		return nil, hubError(err, "reading your credential")
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = "flotilla-dashboard"
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.Scheme, Mapper: s.o.Mapper})
	if err != nil {
		return nil, hubError(err, "creating a client of the hub")
	}
	return c, nil
}

// ctx is r's context.
func ctx(r *http.Request) context.Context { return r.Context() }

// begin reads a request of a view: its query, which may hold only params, and a client of the
// hub with the viewer's identity. When either fails it writes the error and says no.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, params ...string) (query, client.WithWatch, bool) {
	q, e := parseQuery(r.URL.Query(), params...)
	if e != nil {
		writeError(w, e)
		return query{}, nil, false
	}
	c, e := s.client(r)
	if e != nil {
		writeError(w, e)
		return query{}, nil, false
	}
	return q, c, true
}
