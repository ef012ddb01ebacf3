package testenv

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// StartFirstLine starts cmd, returns the first line it prints on its standard output (trimmed),
// and interrupts it and waits for it when the test ends: for commands that print where they serve
// first, such as `flotilla dashboard` and `flotilla mcp --http`.
func StartFirstLine(t testing.TB, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("%s printed no first line: %v", strings.Join(cmd.Args, " "), err)
	}
	return strings.TrimSpace(line)
}
