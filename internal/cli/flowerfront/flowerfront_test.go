package flowerfront

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/flotilla/flotilla/internal/cli/streams"
)

// The command has one flag per Options field, and what Run refuses names the flag.
func TestFlowerFrontFlags(t *testing.T) {
	io, _, _ := streams.Buffers()
	cmd := NewCommand(io)
	var got []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { got = append(got, f.Name) })
	want := []string{"control-token-file", "listen", "tls-cert-file", "tls-key-file", "upstream"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flags (-want +got):\n%s", diff)
	}
	cmd.SetArgs([]string{"--listen", ":9093", "--upstream", "https://127.0.0.1:9091"})
	err := cmd.ExecuteContext(context.Background())
	for _, part := range []string{`--upstream "https://127.0.0.1:9091": scheme "https" is not http`, "--tls-cert-file is required"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("flotilla flower-front with bad flags: error %v, want one containing %q", err, part)
		}
	}
}
