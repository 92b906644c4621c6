package testkit

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CleanerCheckpoint reads a partition's entry of a log directory's
// cleaner-offset-checkpoint (Kafka's format, which samsa and Kafka both
// write after each cleaning): the offset the log's dirty section starts
// at, -1 when the file or the entry is missing. Tests of the log cleaner
// wait on it.
func CleanerCheckpoint(logDir, topic string, partition int32) int64 {
	b, err := os.ReadFile(filepath.Join(logDir, "cleaner-offset-checkpoint"))
	if err != nil {
		return -1
	}
	p := strconv.Itoa(int(partition))
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && f[0] == topic && f[1] == p {
			v, err := strconv.ParseInt(f[2], 10, 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}
