package catalog

import (
	"os"
	"path/filepath"
	"testing"
)

func TestProducerIDBlocksAcrossDirectories(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(b, producerIDFile), []byte(producerIDHeader+"5000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ids ProducerIDs
	id, err := ids.allocate([]string{a, b})
	if err != nil || id != 5000 {
		t.Fatalf("first id %d, %v; want 5000 (the largest block start of any directory)", id, err)
	}
	for _, d := range []string{a, b} {
		if data, _ := os.ReadFile(filepath.Join(d, producerIDFile)); string(data) != producerIDHeader+"6000\n" {
			t.Fatalf("%s holds %q, want the next block start 6000", d, data)
		}
	}
	if err := os.WriteFile(filepath.Join(a, producerIDFile), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	var fresh ProducerIDs
	if _, err := fresh.allocate([]string{a, b}); err == nil {
		t.Fatal("a malformed producer id file was accepted")
	}
}
