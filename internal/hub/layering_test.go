package hub

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/flotilla/flotilla/"

// rule says that packages under from (but not under any of except) must not import packages
// under any of banned. An empty from is every package of the module.
type rule struct {
	from   string
	except []string
	banned []string
}

// rules are the layers of docs/development.md's map. The hub and the agent run in different
// places and are trusted differently: hub code must not build in spoke code or the CLI, and the
// agent must not build in hub code. What both sides share lives in internal/contract (names and
// small wire formats) or internal/core (deterministic logic). Local-fleet machinery is for
// `flotilla dev`, tests and benchmarks, never for the hub or the agent. Command-line code is for
// cmd/ and the CLI itself; test/ and bench/ drive commands as a user does and may import them.
// internal/apitest, the tests' builders of API objects, and internal/logtest, their log
// recorder, are leaves every layer's tests import, so they import nothing of internal/.
var rules = []rule{
	{from: "internal/hub", banned: []string{"internal/agent", "internal/cli", "internal/local"}},
	{from: "internal/agent", banned: []string{"internal/hub", "internal/cli", "internal/local"}},
	{from: "internal/core", banned: []string{"internal/hub", "internal/agent", "internal/cli", "internal/local", "internal/contract"}},
	{from: "internal/contract", banned: []string{"internal/hub", "internal/agent", "internal/cli", "internal/local", "internal/core"}},
	{from: "", except: []string{"cmd", "internal/cli", "test", "bench"}, banned: []string{"internal/cli"}},
	{from: "internal/apitest", banned: []string{"internal"}},
	{from: "internal/logtest", banned: []string{"internal"}},
}

// TestLayering checks every package of the module against rules. The built graph counts (go
// list's Deps, transitive) and so do the packages' tests (their direct imports): a name both
// sides need lives in a shared package (internal/contract/wellknown), not in one side with a test
// pinning the other's copy.
func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`,
		module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	got := crossings(string(out))
	if diff := cmp.Diff([]string(nil), got); diff != "" {
		t.Errorf("packages that cross a layer (-want +got):\n%s\n"+
			"move what both sides share below them: internal/contract for names and wire formats, internal/core for logic (docs/development.md)", diff)
	}
}

// TestAPITestOnlyInTests checks that internal/apitest, the tests' builders of API objects, is
// built into nothing: only _test.go files import it (go list's Deps leave tests out).
func TestAPITestOnlyInTests(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if fields := strings.Fields(line); len(fields) > 1 && slices.Contains(fields[1:], module+"internal/apitest") {
			got = append(got, strings.TrimPrefix(fields[0], module))
		}
	}
	if len(got) > 0 {
		t.Errorf("packages built with internal/apitest, which only _test.go files may import: %v", got)
	}
}

// crossings reads go list's "package dep dep..." lines and lists each forbidden "package -> dep".
func crossings(list string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok {
			continue
		}
		seen := map[string]bool{}
		for _, r := range rules {
			if !r.applies(pkg) {
				continue
			}
			for _, dep := range fields[1:] {
				dep, ok := strings.CutPrefix(dep, module)
				if !ok {
					continue
				}
				for _, b := range r.banned {
					if under(dep, b) && !seen[dep] {
						seen[dep] = true
						out = append(out, pkg+" -> "+dep)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func (r rule) applies(pkg string) bool {
	if r.from != "" && !under(pkg, r.from) {
		return false
	}
	for _, e := range r.except {
		if under(pkg, e) {
			return false
		}
	}
	return true
}

func under(pkg, area string) bool { return pkg == area || strings.HasPrefix(pkg, area+"/") }

func TestCrossings(t *testing.T) {
	for name, tc := range map[string]struct {
		list string
		want []string
	}{
		"allowed": {list: module + "internal/hub/x " + module + "internal/core/scheduler fmt\n" +
			module + "internal/agent/y " + module + "internal/hubby " + module + "internal/contract/scoringwire\n" +
			module + "cmd/flotilla " + module + "internal/cli/get\n" +
			module + "test/cli " + module + "internal/cli/get " + module + "internal/local/testenv"},
		"hub on agent and cli": {list: module + "internal/hub/x " + module + "internal/agent/builtin/a " + module + "internal/cli/v",
			want: []string{"internal/hub/x -> internal/agent/builtin/a", "internal/hub/x -> internal/cli/v"}},
		"agent on hub": {list: module + "internal/agent " + module + "internal/hub",
			want: []string{"internal/agent -> internal/hub"}},
		"hub and agent on local": {list: module + "internal/hub/a " + module + "internal/local/testenv\n" + module + "internal/agent/b " + module + "internal/local/fleet",
			want: []string{"internal/agent/b -> internal/local/fleet", "internal/hub/a -> internal/local/testenv"}},
		"core on hub and contract": {list: module + "internal/core/scheduler " + module + "internal/hub/placement " + module + "internal/contract/wellknown",
			want: []string{"internal/core/scheduler -> internal/contract/wellknown", "internal/core/scheduler -> internal/hub/placement"}},
		"contract on core": {list: module + "internal/contract/fencing " + module + "internal/core/conditions",
			want: []string{"internal/contract/fencing -> internal/core/conditions"}},
		"apitest on anything internal": {list: module + "internal/apitest " + module + "api/cluster/v1 " + module + "internal/contract/wellknown",
			want: []string{"internal/apitest -> internal/contract/wellknown"}},
		"a leaf on cli": {list: module + "internal/install " + module + "internal/cli/streams",
			want: []string{"internal/install -> internal/cli/streams"}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, crossings(tc.list)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestDevelopmentMap checks that docs/development.md's map names every folder of internal/ and
// of its groups, and no folder that is gone: a newcomer reads the architecture there.
func TestDevelopmentMap(t *testing.T) {
	doc, err := os.ReadFile("../../docs/development.md")
	if err != nil {
		t.Fatal(err)
	}
	layout := string(doc)
	if i := strings.Index(layout, "## Layout"); i >= 0 {
		layout = layout[i:]
	}
	if i := strings.Index(layout, "\n## Tests"); i >= 0 {
		layout = layout[:i]
	}
	var missing []string
	top, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range top {
		if !e.IsDir() {
			continue
		}
		if !mentions(layout, e.Name()) {
			missing = append(missing, "internal/"+e.Name())
		}
		if e.Name() == "hub" || e.Name() == "agent" || e.Name() == "cli" {
			continue // one package per controller, area or verb: named where they are used
		}
		subs, err := os.ReadDir(filepath.Join("..", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range subs {
			if s.IsDir() && s.Name() != "testdata" && isGroup(e.Name()) && !mentions(layout, s.Name()) {
				missing = append(missing, "internal/"+e.Name()+"/"+s.Name())
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/development.md's Layout does not name %v: add each with what it owns", missing)
	}
}

func isGroup(name string) bool { return name == "core" || name == "contract" || name == "local" }

func mentions(text, name string) bool {
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(text)
}
