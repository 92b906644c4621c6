package actors

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/segment/vfs"
	"github.com/samsa-io/samsa/wire/batchtest"
	"github.com/samsa-io/samsa/wire/kerr"
)

// TestBrokerOnMemFS: with Options.FS set, every file the broker writes
// goes to that filesystem (logs, the metadata snapshot, producer-id
// blocks, producer-state snapshots, the directory lock), none to the real
// disk; and a crash image of it (only what was fsynced) starts a broker
// that still has the topic, the acknowledged records and the producer's
// sequence.
func TestBrokerOnMemFS(t *testing.T) {
	mem := vfs.NewMemFS()
	dir := filepath.Join(t.TempDir(), "data") // a real path that must stay untouched
	b := startBroker(t, dir, Options{FS: mem})
	createTopicWith(t, b, "m", 1)
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.ProducerID, req.ProducerEpoch = 4, -1, -1
	pid := call(t, b, req).(*kmsg.InitProducerIDResponse).ProducerID
	now := time.Now().UnixMilli()
	mustProduce(t, b, "m", 0, batchtest.Plain(3, now, batchtest.Producer(pid, 0, 0)), 0)
	mustProduce(t, b, "m", 0, batchtest.Plain(2, now, batchtest.Producer(pid, 0, 3)), 3)
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the broker touched the real disk at %s: %v", dir, err)
	}
	names, err := mem.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{LockFileName, "samsa-metadata.json", "samsa-producer-ids", "m-0"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s missing from the MemFS data directory %v", want, names)
		}
	}
	if snaps, _ := mem.List(filepath.Join(dir, "m-0")); !slices.ContainsFunc(snaps, func(n string) bool { return filepath.Ext(n) == ".snapshot" }) {
		t.Errorf("no producer-state snapshot in m-0 on the MemFS: %v", snaps)
	}

	b2 := startBroker(t, dir, Options{FS: mem.CrashClone(nil)})
	if got := listOffset(t, b2, "m", 0, -1); got.Offset != 5 {
		t.Fatalf("after the crash image the log ends at %d, want the 5 acknowledged records", got.Offset)
	}
	// A retry of the last batch is a duplicate, answered with its
	// original offset: the producer state survived too.
	if p := produce(t, b2, -1, "m", 0, batchtest.Plain(2, now, batchtest.Producer(pid, 0, 3))); p.ErrorCode != 0 || p.BaseOffset != 3 {
		t.Fatalf("retry after restart: code %d base %d, want the duplicate's base 3", p.ErrorCode, p.BaseOffset)
	}
}

// TestDeleteTopicsOnAFullDisk: with the disk full for as long as a topic's
// files exist, DeleteTopics still deletes it (its files go first, then the
// deletion is persisted in the room they left), so an operator can free
// space through the broker; and the deletion survives a crash.
func TestDeleteTopicsOnAFullDisk(t *testing.T) {
	mem := vfs.NewMemFS()
	efs := vfs.NewErrorFS(mem, true)
	dir := "/data"
	b := startBroker(t, dir, Options{FS: efs})
	createTopicWith(t, b, "big", 1)
	mustProduce(t, b, "big", 0, batchtest.Plain(3, time.Now().UnixMilli()), 0)
	efs.SetFault(func(op vfs.Op, _ string, _ int) (int, error) {
		if _, err := mem.Stat(filepath.Join(dir, "big-0")); err == nil && (op == vfs.OpWrite || op == vfs.OpCreate) {
			return 0, syscall.ENOSPC
		}
		return 0, nil
	})
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	dt := kmsg.NewDeleteTopicsRequestTopic()
	dt.Topic = kmsg.StringPtr("big")
	req.Topics = append(req.Topics, dt)
	if r := call(t, b, req).(*kmsg.DeleteTopicsResponse); r.Topics[0].ErrorCode != 0 {
		t.Fatalf("delete on a full disk: %v %s", kerr.Code(r.Topics[0].ErrorCode), msgOf(r.Topics[0].ErrorMessage))
	}
	if _, err := mem.Stat(filepath.Join(dir, "big-0")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the topic's files are still there: %v", err)
	}
	b2 := startBroker(t, dir, Options{FS: mem.CrashClone(nil)})
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("big")}}
	if got := call(t, b2, md).(*kmsg.MetadataResponse).Topics[0].ErrorCode; got != kerr.UnknownTopicOrPartition.Int16() {
		t.Fatalf("after a crash the deleted topic answers %v, want UNKNOWN_TOPIC_OR_PARTITION", kerr.Code(got))
	}
}
