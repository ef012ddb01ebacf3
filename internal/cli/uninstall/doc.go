// Package uninstall is `flotilla uninstall hub|agent`: it removes what `flotilla init --install`
// or `flotilla join --install` installed, and nothing else.
package uninstall
