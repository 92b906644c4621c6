package main

import (
	"bytes"
	"os"
)

// keptHeading opens the part of docs/compatibility.md that this program
// does not write: the inter-broker compatibility, which e2e/mixed tests
// (Kafka 3.9.1 brokers and samsa brokers in one cluster). A rewrite of the
// matrix keeps it, from this heading to the end, as it was.
const keptHeading = "\n## Inter-broker compatibility"

// keptSection is the kept part of the file at path, or nothing when the
// file or the heading is missing.
func keptSection(path string) []byte {
	old, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	if i := bytes.Index(old, []byte(keptHeading)); i >= 0 {
		return old[i:]
	}
	return nil
}
