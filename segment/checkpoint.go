package segment

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/segment/vfs"
)

// File names at the log-directory level and in a partition directory.
// They are part of the on-disk format (Kafka's names).
const (
	RecoveryPointFile  = "recovery-point-offset-checkpoint"
	LogStartFile       = "log-start-offset-checkpoint"
	CleanShutdownFile  = ".kafka_cleanshutdown"
	LeaderEpochFile    = "leader-epoch-checkpoint"
	checkpointVersion0 = 0
)

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// encodeOffsetCheckpoint renders Kafka's offset checkpoint text format:
// a version line (0), a count line, then "topic partition offset" lines.
func encodeOffsetCheckpoint(m map[TopicPartition]int64) []byte {
	keys := make([]TopicPartition, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Topic != keys[j].Topic {
			return keys[i].Topic < keys[j].Topic
		}
		return keys[i].Partition < keys[j].Partition
	})
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n%d\n", checkpointVersion0, len(keys))
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d %d\n", k.Topic, k.Partition, m[k])
	}
	return b.Bytes()
}

// parseCheckpointLines checks the version and count lines and returns the
// entry lines, each split into wantFields fields.
func parseCheckpointLines(data []byte, wantFields int) ([][]string, error) {
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) < 2 {
		return nil, errors.New("missing version or count line")
	}
	if v, err := strconv.Atoi(strings.TrimSpace(lines[0])); err != nil || v != checkpointVersion0 {
		return nil, fmt.Errorf("unsupported version line %q", lines[0])
	}
	n, err := strconv.Atoi(strings.TrimSpace(lines[1]))
	if err != nil || n < 0 || n != len(lines)-2 {
		return nil, fmt.Errorf("count line %q does not match %d entries", lines[1], len(lines)-2)
	}
	out := make([][]string, 0, n)
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) != wantFields {
			return nil, fmt.Errorf("malformed line %q", l)
		}
		out = append(out, f)
	}
	return out, nil
}

func parseOffsetCheckpoint(data []byte) (map[TopicPartition]int64, error) {
	lines, err := parseCheckpointLines(data, 3)
	if err != nil {
		return nil, err
	}
	m := make(map[TopicPartition]int64, len(lines))
	for _, f := range lines {
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		off, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || p < 0 || off < 0 {
			return nil, fmt.Errorf("malformed entry %q", strings.Join(f, " "))
		}
		m[TopicPartition{f[0], int32(p)}] = off
	}
	return m, nil
}

// readOffsetCheckpoint reads a checkpoint file; a missing file is empty.
// A damaged one (it is written atomically, so the disk or a person broke
// it) is logged with what ignoring it costs (effect) and read as empty,
// as Kafka does: both offset checkpoints only save work or hide deleted
// records, and refusing to start over them would take every partition
// of the directory offline. An error reading the file is returned.
func readOffsetCheckpoint(fsys vfs.FS, path string, logger *slog.Logger, effect string) (map[TopicPartition]int64, error) {
	data, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[TopicPartition]int64{}, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := parseOffsetCheckpoint(data)
	if err != nil {
		logger.Warn("segment: damaged checkpoint file ignored", "file", path, "err", err, "effect", effect)
		return map[TopicPartition]int64{}, nil
	}
	return m, nil
}

// epochEntry: the leader epoch epoch began at offset start.
type epochEntry struct {
	Epoch int32
	Start int64
}

func encodeEpochCheckpoint(entries []epochEntry) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n%d\n", checkpointVersion0, len(entries))
	for _, e := range entries {
		fmt.Fprintf(&b, "%d %d\n", e.Epoch, e.Start)
	}
	return b.Bytes()
}

func parseEpochCheckpoint(data []byte) ([]epochEntry, error) {
	lines, err := parseCheckpointLines(data, 2)
	if err != nil {
		return nil, err
	}
	out := make([]epochEntry, 0, len(lines))
	for _, f := range lines {
		e, err1 := strconv.ParseInt(f[0], 10, 32)
		s, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || e < 0 || s < 0 {
			return nil, fmt.Errorf("malformed entry %q", strings.Join(f, " "))
		}
		if n := len(out); n > 0 && (int32(e) <= out[n-1].Epoch || s < out[n-1].Start) {
			return nil, fmt.Errorf("entry %q not increasing", strings.Join(f, " "))
		}
		out = append(out, epochEntry{int32(e), s})
	}
	return out, nil
}
