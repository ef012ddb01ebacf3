// Package dashboardassets embeds the dashboard's built single-page app (web/dashboard/dist, which
// `make build` writes with `npm ci && npm run build`) into the flotilla binary. A binary built
// without it (plain `go build`) embeds only dist/.keep, and the dashboard says so on its page.
package dashboardassets

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// FS is the built app: index.html and assets/.
func FS() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // dist is embedded at build time
	}
	return sub
}
