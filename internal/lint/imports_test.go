package lint

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/samsa-io/samsa"

// allowed lists, for each top-level folder, the other top-level folders of
// the project it may import (design.md, "Packages and who may import
// whom"). A folder may always import its own sub-packages. "*" allows all.
var allowed = map[string][]string{
	"wire":     {},
	"segment":  {"wire"},
	"netloop":  {"wire"},
	"actors":   {"wire", "segment"},
	"cmd":      {"*"},
	"bench":    {"testkit", "wire"},
	"testkit":  {"*"},
	"internal": {"*"},
	"e2e":      {"*"},
}

// forbidden lists third-party or standard-library import prefixes a folder
// must never reach, directly or transitively.
var forbidden = map[string][]string{
	"wire":    {"net", "os/exec", "github.com/panjf2000/gnet", "github.com/asynkron/protoactor-go", "github.com/go-zookeeper/zk"},
	"segment": {"net/http", "github.com/panjf2000/gnet", "github.com/asynkron/protoactor-go", "github.com/go-zookeeper/zk"},
	"netloop": {"github.com/asynkron/protoactor-go", "github.com/go-zookeeper/zk"},
	"actors":  {"github.com/panjf2000/gnet"},
}

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

// area returns the top-level folder of a project import path, or "" for
// anything outside the module.
func area(path string) string {
	if path == module {
		return "."
	}
	rest, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return ""
	}
	top, _, _ := strings.Cut(rest, "/")
	return top
}

func TestImportRules(t *testing.T) {
	for _, p := range listPackages(t) {
		from := area(p.ImportPath)
		rules, known := allowed[from]
		if !known {
			t.Errorf("%s: top-level folder %q has no import rule; add it to design.md and this test", p.ImportPath, from)
			continue
		}
		for _, imp := range p.Imports {
			to := area(imp)
			if to == "" || to == from || allows(rules, to) {
				continue
			}
			t.Errorf("%s imports %s: %s/ may import only %v", p.ImportPath, imp, from, rules)
		}
	}
}

func TestForbiddenDependencies(t *testing.T) {
	for _, p := range listPackages(t) {
		bans := forbidden[area(p.ImportPath)]
		for _, dep := range p.Deps {
			for _, ban := range bans {
				if dep == ban || strings.HasPrefix(dep, ban+"/") {
					t.Errorf("%s depends on %s, which %s/ must not use", p.ImportPath, dep, area(p.ImportPath))
				}
			}
		}
	}
}

func allows(rules []string, to string) bool {
	for _, r := range rules {
		if r == "*" || r == to {
			return true
		}
	}
	return false
}
