package dashboard

import (
	"strings"
	"testing"
)

func TestCheckLoopback(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8090": "",
		"127.0.0.1:0":    "",
		"localhost:8090": "",
		"[::1]:8090":     "",
		"0.0.0.0:8090":   `--address "0.0.0.0:8090" is not a loopback address`,
		"10.0.0.5:8090":  `--address "10.0.0.5:8090" is not a loopback address`,
		":8090":          `--address ":8090" is not a loopback address`,
		"127.0.0.1":      `--address "127.0.0.1" is not HOST:PORT`,
	} {
		err := CheckLoopback(addr)
		switch {
		case want == "" && err != nil:
			t.Errorf("CheckLoopback(%q) = %v, want nil", addr, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("CheckLoopback(%q) = %v, want an error containing %q", addr, err, want)
		}
	}
}
