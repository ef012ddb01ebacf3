// Command coredns is CoreDNS with only the plugins a real node's cluster DNS uses
// (internal/local/realnode): building github.com/coredns/coredns's own main would compile every
// plugin it ships, dozens of cloud SDKs among them.
package main

import (
	"log"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
)

// directives are the plugins compiled in, in the order CoreDNS's plugin.cfg gives them: a
// request passes through them in this order, whatever the order in the Corefile.
var directives = []string{
	"bind",
	"errors",
	"cache",
	"kubernetes",
}

func main() {
	if err := dnsserver.SetDirectives(directives); err != nil {
		log.Fatalf("coredns: the directive list in tools/coredns/main.go: %v", err)
	}
	coremain.Run()
}
