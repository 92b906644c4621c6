package wire

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The checked-in seed corpora under testdata/fuzz/ are generated from kmsg
// encodings; regenerate them after a table change with
//
//	go test ./wire -run TestWriteSeedCorpus -update-corpus
var updateCorpus = flag.Bool("update-corpus", false, "rewrite the seed corpora under testdata/fuzz")

// corpusEntry is one seed: a file name and the fuzz arguments.
type corpusEntry struct {
	name string
	args []any
}

// writeCorpus replaces the generated seeds of a fuzz target (files whose
// name starts with "seed-"; inputs the fuzzer found are kept).
func writeCorpus(t *testing.T, target string, entries []corpusEntry) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "seed-*"))
	for _, f := range old {
		os.Remove(f)
	}
	for _, e := range entries {
		var b strings.Builder
		b.WriteString("go test fuzz v1\n")
		for _, a := range e.args {
			switch v := a.(type) {
			case []byte:
				fmt.Fprintf(&b, "[]byte(%q)\n", v)
			case byte:
				fmt.Fprintf(&b, "byte(%q)\n", v)
			case int16:
				fmt.Fprintf(&b, "int16(%d)\n", v)
			case int64:
				fmt.Fprintf(&b, "int64(%d)\n", v)
			default:
				t.Fatalf("corpus type %T", a)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "seed-"+e.name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readCorpusBytes returns the first []byte argument of every seed file of
// target, keyed by file name.
func readCorpusBytes(t *testing.T, target string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if q, ok := strings.CutPrefix(line, "[]byte("); ok {
				s, err := strconv.Unquote(strings.TrimSuffix(q, ")"))
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				out[filepath.Base(f)] = []byte(s)
				break
			}
		}
	}
	return out
}

// requestSeeds is every API of the served and planned tables at every
// advertised version, plus ApiVersions one past its max (KIP-511).
func requestSeeds() []corpusEntry {
	var out []corpusEntry
	for _, row := range allRows() {
		maxV := row.Max
		if row.Key == KeyApiVersions {
			maxV++ // the KIP-511 path; kmsg knows v5
		}
		for v := row.Min; v <= maxV; v++ {
			frame := encodeFrame(sampleRequest(row.Key, v), int32(v)+100, "seed-client")
			out = append(out, corpusEntry{fmt.Sprintf("%s-v%d", APIName(row.Key), v), []any{frame}})
		}
	}
	return out
}

func TestWriteSeedCorpus(t *testing.T) {
	if !*updateCorpus {
		t.Skip("run with -update-corpus to regenerate testdata/fuzz")
	}
	writeCorpus(t, "FuzzDecodeRequest", requestSeeds())
	for target, seeds := range extraCorpora() {
		writeCorpus(t, target, seeds)
	}
}

// extraCorpora lists the seed generators of the other fuzz targets; each
// test file adds its own through init.
var extraCorporaFns = map[string]func() []corpusEntry{}

func extraCorpora() map[string][]corpusEntry {
	out := map[string][]corpusEntry{}
	for k, fn := range extraCorporaFns {
		out[k] = fn()
	}
	return out
}

// TestSeedCorpusCurrent checks that the checked-in request seeds are the
// ones the generator makes now: every API of the table at every version.
func TestSeedCorpusCurrent(t *testing.T) {
	have := readCorpusBytes(t, "FuzzDecodeRequest")
	for _, e := range requestSeeds() {
		got, ok := have["seed-"+e.name]
		if !ok {
			t.Errorf("seed %s missing; run go test ./wire -run TestWriteSeedCorpus -update-corpus", e.name)
			continue
		}
		if string(got) != string(e.args[0].([]byte)) {
			t.Errorf("seed %s is stale; regenerate", e.name)
		}
	}
}
