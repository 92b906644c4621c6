package lint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A clockRule bans some functions of package time from a set of files.
// Files are named by their slash-separated path from the repository root.
type clockRule struct {
	name   string
	files  func(rel string) bool
	banned []string // names in package time
	fix    string   // what to do instead, for the failure message
}

// pureCores are the files of the actors' pure cores (design.md, "Actors":
// "Time reaches the core as messages or arguments, never time.Now() deep
// inside"). In actors/partition the core shares the package with its
// actor shell: core*.go and validate.go are the core, actor*.go the shell.
var pureCores = []string{
	"actors/group/*.go",
	"actors/metadata/*.go",
	"actors/idempotence/*.go",
	"actors/partition/core*.go",
	"actors/partition/validate*.go",
	"actors/partition/segment_config.go",
	// actors/controller: everything but the shell (actor*.go, messages.go,
	// store.go).
	"actors/controller/core*.go",
	"actors/controller/types.go",
	"actors/controller/config.go",
	"actors/controller/effects.go",
	"actors/controller/requests.go",
	"actors/controller/election.go",
	"actors/controller/replicas.go",
	"actors/controller/brokers.go",
	"actors/controller/topics.go",
	"actors/controller/deletion.go",
	"actors/controller/alter.go",
	"actors/controller/shutdown.go",
	"actors/controller/preferred.go",
	// actors/txn: the coordinator's core (its shell will be actor*.go).
	"actors/txn/types.go",
	"actors/txn/record.go",
	"actors/txn/core.go",
	"actors/txn/init.go",
	"actors/txn/add.go",
	"actors/txn/end.go",
	"actors/txn/appended.go",
	"actors/txn/tick.go",
}

// sleepFree reports whether the rule against time.Sleep covers rel: every
// unit and package test. End-to-end suites drive real processes and real
// clients, which sometimes leaves nothing to wait on but time.
func sleepFree(rel string) bool {
	return strings.HasSuffix(rel, "_test.go") &&
		!strings.HasPrefix(rel, "e2e/") && !strings.HasPrefix(rel, "bench/compare/")
}

var clockRules = []clockRule{
	{
		name: "pure cores take time as an argument",
		files: func(rel string) bool {
			if strings.HasSuffix(rel, "_test.go") {
				return false // tests drive the core with their own clock; any clock will do
			}
			return slices.ContainsFunc(pureCores, func(p string) bool { ok, _ := path.Match(p, rel); return ok })
		},
		// Every way of reading the clock or arming a real timer: a core
		// that does any of these cannot be replayed by the deterministic
		// simulation (design.md, "Tests and measurement").
		banned: []string{"Now", "Since", "Until", "AfterFunc", "NewTimer", "Sleep", "After", "Tick", "NewTicker"},
		fix:    "take the current time as an argument (or a message) from the actor shell, and return timers as effects",
	},
	{
		name:   "unit tests wait for events, not for time",
		files:  sleepFree,
		banned: []string{"Sleep"},
		fix: "wait for the event itself (a channel, a sync primitive, a hook) or run the test in testing/synctest; " +
			"a sleep either wastes time or, on a loaded machine, is too short (only e2e/ and bench/compare/ may sleep)",
	},
}

// sleepAllowed lists test files that still sleep, each with the reason.
// An entry whose file is gone or no longer sleeps fails the test, so the
// list only shrinks.
var sleepAllowed = map[string]string{}

// A clockCall is one use of a banned function.
type clockCall struct {
	pos  token.Position
	name string // "Sleep", "Now", ...
}

// clockCalls returns the uses of package time's functions named in banned
// in one file's source. A use is any reference, not only a call: passing
// time.Now as a clock function reads the clock just the same.
func clockCalls(filename string, src any, banned []string) ([]clockCall, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p != "time" {
			continue
		}
		local = "time"
		if imp.Name != nil {
			local = imp.Name.Name
		}
	}
	switch local {
	case "", "_":
		return nil, nil
	case ".":
		return nil, fmt.Errorf("%s: dot import of time hides its clock calls from this check; import it by name", filename)
	}
	// Names bound in the file shadow the import where they are in scope;
	// a file that declares its own "time" anywhere is rare enough that
	// the check counts on none does (SkipObjectResolution above keeps
	// the parser fast and the check simple).
	var calls []clockCall
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == local && slices.Contains(banned, sel.Sel.Name) {
			calls = append(calls, clockCall{fset.Position(sel.Pos()), sel.Sel.Name})
		}
		return true
	})
	return calls, nil
}

// goFiles returns the repository's Go files as slash paths from root,
// skipping hidden folders (.git, .tools), testdata and vendored trees.
func goFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	return out
}

func TestClockRules(t *testing.T) {
	const root = "../.."
	files := goFiles(t, root)
	sleeping := map[string]bool{} // allowlisted files seen sleeping
	for _, rule := range clockRules {
		for _, rel := range files {
			if !rule.files(rel) {
				continue
			}
			calls, err := clockCalls(filepath.Join(root, rel), nil, rule.banned)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				continue
			}
			for _, c := range calls {
				if c.name == "Sleep" && sleepFree(rel) && sleepAllowed[rel] != "" {
					sleeping[rel] = true
					continue
				}
				t.Errorf("%s:%d:%d: time.%s breaks the rule %q: %s",
					rel, c.pos.Line, c.pos.Column, c.name, rule.name, rule.fix)
			}
		}
	}
	for rel := range sleepAllowed {
		if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
			t.Errorf("%s is on sleepAllowed (internal/lint/clock_test.go) but is gone: remove the entry", rel)
		} else if !sleeping[rel] {
			t.Errorf("%s is on sleepAllowed (internal/lint/clock_test.go) but no longer sleeps: remove the entry", rel)
		}
	}
}

// The checker itself: aliases are followed, other packages' Sleep and
// non-banned time functions pass, references count as much as calls.
func TestClockCallsFinds(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{`package p; import "time"; func f() { time.Sleep(1) }`, []string{"Sleep"}},
		{`package p; import t "time"; func f() { t.Sleep(1); _ = t.Now }`, []string{"Sleep", "Now"}},
		{`package p; import "time"; func f() { _ = time.Duration(1); _ = time.Unix(0, 0) }`, nil},
		{`package p; import "other/time"; func f() { time.Sleep(1) }`, nil},
		{`package p; func f() { time.Sleep(1) }`, nil}, // not package time
	} {
		calls, err := clockCalls("x.go", tc.src, []string{"Sleep", "Now"})
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		var got []string
		for _, c := range calls {
			got = append(got, c.name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: found %v, want %v", tc.src, got, tc.want)
		}
	}
	if _, err := clockCalls("x.go", `package p; import . "time"; func f() { Sleep(1) }`, nil); err == nil {
		t.Error("a dot import of time passed unnoticed")
	}
}
