package hub

import (
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/flotilla/flotilla/"

// The hub and the agent run in different places and are trusted differently: hub code must not
// build in spoke code or the CLI, and the agent must not build in hub code. What both sides
// share lives in a package of its own (internal/contract/scoringwire, internal/core/placementview).
// The built graph counts (go list's Deps, transitive) and so do the packages' tests (their direct
// imports): a name both sides need lives in a shared package (internal/contract/wellknown), not in one side
// with a test pinning the other's copy.
func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`,
		module+"internal/hub/...", module+"internal/agent/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	got := crossings(string(out))
	if diff := cmp.Diff([]string(nil), got); diff != "" {
		t.Errorf("packages that cross the hub/agent/CLI line (-want +got):\n%s\n"+
			"move what both sides share into a package under internal/ that is neither hub, agent nor cli", diff)
	}
}

// crossings reads go list's "package dep dep..." lines and lists each forbidden "package -> dep".
func crossings(list string) []string {
	forbidden := map[string][]string{
		"internal/hub":   {"internal/agent", "internal/cli"},
		"internal/agent": {"internal/hub"},
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg := strings.TrimPrefix(fields[0], module)
		for area, banned := range forbidden {
			if !under(pkg, area) {
				continue
			}
			for _, dep := range fields[1:] {
				dep, ok := strings.CutPrefix(dep, module)
				if !ok {
					continue
				}
				for _, b := range banned {
					if under(dep, b) {
						out = append(out, pkg+" -> "+dep)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func under(pkg, area string) bool { return pkg == area || strings.HasPrefix(pkg, area+"/") }

func TestCrossings(t *testing.T) {
	for name, tc := range map[string]struct {
		list string
		want []string
	}{
		"allowed": {list: module + "internal/hub/x " + module + "internal/core/scheduler fmt\n" +
			module + "internal/agent/y " + module + "internal/hubby " + module + "internal/contract/scoringwire"},
		"hub on agent and cli": {list: module + "internal/hub/x " + module + "internal/agent/builtin/a " + module + "internal/cli/v",
			want: []string{"internal/hub/x -> internal/agent/builtin/a", "internal/hub/x -> internal/cli/v"}},
		"agent on hub": {list: module + "internal/agent " + module + "internal/hub",
			want: []string{"internal/agent -> internal/hub"}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, crossings(tc.list)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
