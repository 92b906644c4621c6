package lint

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/samsa-io/samsa"

// allowed lists, for each top-level folder, the other top-level folders of
// the project it may import (design.md, "Packages and who may import
// whom"). A folder may always import its own sub-packages. "*" allows all.
var allowed = map[string][]string{
	"wire":        {},
	"segment":     {"wire"},
	"netloop":     {"wire"},
	"interbroker": {"wire"},
	"actors":      {"wire", "segment", "zkmeta", "interbroker"},
	"cmd":         {"*"},
	"bench":       {"testkit", "wire"},
	"testkit":     {"*"},
	"internal":    {"*"},
	"e2e":         {"*"},
	"zkmeta":      {},
	"web":         {"wire"},
	// pkg/samsa is the entry point other modules import (samsa.Run);
	// examples/ use only it and the plug-in API.
	"pkg":      {"*"},
	"examples": {"pkg", "actors"},
}

// forbidden lists third-party or standard-library import prefixes a folder
// must never reach, directly or transitively.
var forbidden = map[string][]string{
	"wire":        {"net", "os/exec", "github.com/panjf2000/gnet", "github.com/asynkron/protoactor-go", "github.com/go-zookeeper/zk"},
	"segment":     {"net/http", "github.com/panjf2000/gnet", "github.com/asynkron/protoactor-go", "github.com/go-zookeeper/zk"},
	"netloop":     {"github.com/asynkron/protoactor-go", "github.com/go-zookeeper/zk"},
	"interbroker": {"github.com/panjf2000/gnet", "github.com/asynkron/protoactor-go", "github.com/go-zookeeper/zk"},
	"actors":      {"github.com/panjf2000/gnet"},
	"zkmeta":      {"github.com/panjf2000/gnet", "github.com/asynkron/protoactor-go"},
	"web":         {"github.com/panjf2000/gnet"},
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
			t.Errorf("%s: top-level folder %q has no import rule; add it to this test and docs/architecture.md", p.ImportPath, from)
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

// A layerRule keeps a package of the project, and its sub-packages, from
// depending, directly or transitively, on other packages (each also with
// its sub-packages). Paths are relative to the module ("actors/group") or,
// for third-party code, full import paths.
type layerRule struct {
	from string
	not  []string
	why  string
	// planned: the package is one the actors/ redesign introduces; until
	// it exists the rule has nothing to check. An unplanned rule whose
	// package is missing fails, so a rename cannot silently retire it.
	planned bool
}

const (
	protoactor = "github.com/asynkron/protoactor-go"
	gnet       = "github.com/panjf2000/gnet"
)

// pureCore is why a pure core stays away from actors and sockets
// (design.md, "Actors": a thin shell around a plain state type, unit-tested
// without an actor system).
const pureCore = "a pure core is plain state that takes messages and time and returns effects; the actor shell owns protoactor-go, and sockets belong to netloop"

// layerRules are design.md's layering inside actors/ (docs/architecture.md
// draws it): pure cores below protoactor, the partition below everything
// that sends it messages, the API handlers on top.
var layerRules = []layerRule{
	{from: "actors/group", not: []string{protoactor, gnet, "netloop"}, why: pureCore},
	{from: "actors/idempotence", not: []string{protoactor, gnet, "netloop"}, why: pureCore},
	{from: "actors/metadata", not: []string{protoactor, gnet, "netloop"}, why: pureCore},
	{from: "actors/gather", not: []string{protoactor, gnet, "netloop", "actors/partition"},
		why: "the gather is the primitive every actor answers through; it knows no actor"},
	{from: "actors/partition", not: []string{"actors/fetch", "actors/api", "actors/catalog", "actors/coordinator", "actors/routing", "actors/env"},
		why: "the partition owns its log and the state derived from it; fetch, the API handlers, the metadata actor and the coordinators are built on it, not under it"},
	{from: "actors/routing", not: []string{"actors/fetch", "actors/api", "actors/catalog", "actors/coordinator"},
		why: "the routing table is read by everyone and knows only partitions"},
	{from: "actors/fetch", not: []string{"actors/api", "actors/catalog", "actors/coordinator"},
		why: "the API handlers call into fetch; fetch reaches partitions through the routing table alone"},
	{from: "actors/catalog", not: []string{"actors/api", "actors/fetch", "actors/coordinator"},
		why: "the metadata actor serves what the API handlers send it and spawns partitions; it calls neither back"},
	{from: "actors/coordinator", not: []string{"actors/api", "actors/fetch"},
		why: "the group coordinators answer what the API handlers send them"},
	{from: "actors/controller", not: []string{gnet, "netloop", "actors/api", "actors/catalog", "actors/fetch", "actors/coordinator", "actors/partition"},
		why: "the controller talks to brokers only through its Sender and to ZooKeeper through its Store; it is no part of the request path"},
	{from: "actors/api", not: []string{"netloop", gnet},
		why: "handlers see requests as wire values; sockets are netloop's"},
}

// under reports whether import path p is pkg or one of its sub-packages.
func under(p, pkg string) bool { return p == pkg || strings.HasPrefix(p, pkg+"/") }

// projectPath turns a rule's path into an import path.
func projectPath(p string) string {
	if strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
		return p // third-party: github.com/...
	}
	return module + "/" + p
}

func TestLayerRules(t *testing.T) {
	pkgs := listPackages(t)
	byPath := make(map[string]pkg, len(pkgs))
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
	}
	for _, rule := range layerRules {
		from := projectPath(rule.from)
		found := false
		for _, p := range pkgs {
			if !under(p.ImportPath, from) {
				continue
			}
			found = true
			for _, ban := range rule.not {
				banned := projectPath(ban)
				for _, dep := range p.Deps {
					if !under(dep, banned) {
						continue
					}
					t.Errorf("%s %s, but %s/ must not depend on %s: %s (rule in internal/lint/imports_test.go, layerRules)",
						p.ImportPath, how(p, dep, byPath), rule.from, ban, rule.why)
					break // one line per banned package is enough to act on
				}
			}
		}
		if !found && !rule.planned {
			t.Errorf("layerRules names %s/, which has no package: update the rule (internal/lint/imports_test.go)", rule.from)
		}
	}
}

// how says how p comes to depend on dep: directly, or through which of
// its direct imports.
func how(p pkg, dep string, byPath map[string]pkg) string {
	for _, imp := range p.Imports {
		if imp == dep {
			return "imports " + dep
		}
	}
	for _, imp := range p.Imports {
		if slices.Contains(byPath[imp].Deps, dep) {
			return "depends on " + dep + " through its import of " + imp
		}
	}
	return "depends on " + dep
}
