package actors_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors"
	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/testkit"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestAdminThroughKadm(t *testing.T) {
	dir := t.TempDir()
	n := testkit.StartInProcess(t, "log.dirs", dir, "num.partitions", "2")
	adm, cl := n.Admin(t)
	ctx := ctxT(t)

	// Create.
	created, err := adm.CreateTopics(ctx, 3, 1, map[string]*string{"retention.ms": kadm.StringPtr("60000")}, "orders", "events")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range created.Sorted() {
		if c.Err != nil {
			t.Fatalf("create %s: %v %s", c.Topic, c.Err, c.ErrMessage)
		}
	}
	bad, _ := adm.CreateTopics(ctx, 1, 3, nil, "replicated")
	if r := bad["replicated"]; !errors.Is(r.Err, kerr.InvalidReplicationFactor) || r.ErrMessage == "" {
		t.Fatalf("rf 3 on one broker: %v %q", r.Err, r.ErrMessage)
	}
	bad, _ = adm.CreateTopics(ctx, 1, 1, map[string]*string{"retention.mss": kadm.StringPtr("1")}, "typo")
	if r := bad["typo"]; !errors.Is(r.Err, kerr.InvalidConfig) {
		t.Fatalf("unknown config: %v", r.Err)
	}
	for _, f := range []string{"orders-0", "orders-2", "events-1"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("partition directory %s: %v", f, err)
		}
	}

	// List and describe.
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !topics.Has("orders") || !topics.Has("events") || len(topics["orders"].Partitions) != 3 {
		t.Fatalf("list: %v", topics.Names())
	}
	if p := topics["orders"].Partitions[1]; p.Leader != 0 || len(p.Replicas) != 1 || len(p.ISR) != 1 {
		t.Fatalf("partition metadata %+v", p)
	}
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(meta.Brokers) != 1 || meta.Brokers[0].Host+":"+strconv.Itoa(int(meta.Brokers[0].Port)) != n.Addr || meta.Controller != 0 {
		t.Fatalf("brokers %+v controller %d (want %s)", meta.Brokers, meta.Controller, n.Addr)
	}

	// Describe configs, with sources and synonyms.
	rcs, err := adm.DescribeTopicConfigs(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]kadm.Config{}
	for _, c := range rcs[0].Configs {
		got[c.Key] = c
	}
	if c := got["retention.ms"]; c.MaybeValue() != "60000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("retention.ms %+v", c)
	}
	if c := got["segment.bytes"]; c.MaybeValue() != "1073741824" || c.Source != kmsg.ConfigSourceDefaultConfig || len(c.Synonyms) == 0 {
		t.Fatalf("segment.bytes %+v", c)
	}
	brcs, err := adm.DescribeBrokerConfigs(ctx, 0)
	if err != nil || brcs[0].Err != nil {
		t.Fatalf("broker configs: %v %v", err, brcs)
	}
	bcfg := map[string]kadm.Config{}
	for _, c := range brcs[0].Configs {
		bcfg[c.Key] = c
	}
	if c := bcfg["num.partitions"]; c.MaybeValue() != "2" || c.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Fatalf("num.partitions %+v", c)
	}

	// Alter: incremental, then legacy (which replaces the set).
	alt, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "segment.ms", Value: kadm.StringPtr("3600000")}, {Name: "retention.ms", Op: kadm.DeleteConfig}}, "orders")
	if err != nil || alt[0].Err != nil {
		t.Fatalf("incremental alter: %v %+v", err, alt)
	}
	alt, _ = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "segment.ms", Value: kadm.StringPtr("-5")}}, "orders")
	if !errors.Is(alt[0].Err, kerr.InvalidConfig) {
		t.Fatalf("invalid alter: %+v", alt)
	}
	alt, err = adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "cleanup.policy", Value: kadm.StringPtr("compact")}}, "events")
	if err != nil || alt[0].Err != nil {
		t.Fatalf("legacy alter: %v %+v", err, alt)
	}
	rcs, _ = adm.DescribeTopicConfigs(ctx, "orders", "events")
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			switch {
			case rc.Name == "orders" && c.Key == "segment.ms" && (c.MaybeValue() != "3600000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig):
				t.Errorf("orders segment.ms %+v", c)
			case rc.Name == "orders" && c.Key == "retention.ms" && c.Source != kmsg.ConfigSourceDefaultConfig:
				t.Errorf("orders retention.ms not deleted: %+v", c)
			case rc.Name == "events" && c.Key == "cleanup.policy" && c.MaybeValue() != "compact":
				t.Errorf("events cleanup.policy %+v", c)
			}
		}
	}

	// Create partitions.
	cp, err := adm.UpdatePartitions(ctx, 5, "orders")
	if err != nil || cp["orders"].Err != nil {
		t.Fatalf("update partitions: %v %+v", err, cp)
	}
	cp, _ = adm.UpdatePartitions(ctx, 2, "orders")
	if !errors.Is(cp["orders"].Err, kerr.InvalidPartitions) {
		t.Fatalf("shrink: %+v", cp)
	}
	if _, err := os.Stat(filepath.Join(dir, "orders-4")); err != nil {
		t.Fatalf("new partition directory: %v", err)
	}

	// Describe cluster (raw request: kadm has no wrapper for every field).
	dc := kmsg.NewPtrDescribeClusterRequest()
	dcr, err := dc.RequestWith(ctx, cl)
	if err != nil || dcr.ErrorCode != 0 || dcr.ControllerID != 0 || len(dcr.Brokers) != 1 || dcr.ClusterID == "" {
		t.Fatalf("describe cluster: %v %+v", err, dcr)
	}

	// Describe log dirs: every partition reported in the one directory.
	lds, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ld, ok := lds[0][dir]
	if !ok || ld.Err != nil || len(ld.Topics["orders"]) != 5 || len(ld.Topics["events"]) != 3 || ld.TotalBytes <= 0 {
		t.Fatalf("log dirs %+v", lds)
	}

	// Delete: files go before the answer; the name is free again.
	del, err := adm.DeleteTopics(ctx, "events")
	if err != nil || del["events"].Err != nil {
		t.Fatalf("delete: %v %+v", err, del)
	}
	if _, err := os.Stat(filepath.Join(dir, "events-0")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("events-0 still on disk: %v", err)
	}
	del, _ = adm.DeleteTopics(ctx, "never")
	if !errors.Is(del["never"].Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("delete unknown: %+v", del)
	}
	again, _ := adm.CreateTopics(ctx, 1, 1, nil, "events")
	if again["events"].Err != nil {
		t.Fatalf("re-create: %v", again["events"].Err)
	}
}

func TestTopicsAndConfigsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	n := testkit.StartInProcess(t, "log.dirs", dir)
	adm, _ := n.Admin(t)
	ctx := ctxT(t)
	created, err := adm.CreateTopic(ctx, 4, 1, map[string]*string{"segment.bytes": kadm.StringPtr("1048576")}, "keep")
	if err != nil || created.Err != nil {
		t.Fatalf("create: %v %v", err, created.Err)
	}
	if _, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "log.retention.ms", Value: kadm.StringPtr("123456")}}); err != nil {
		t.Fatal(err)
	}
	clusterID := n.Broker.ClusterID()
	n.Close()
	// A clean close leaves segment's clean-shutdown marker: the next
	// start skips recovery.
	if _, err := os.Stat(filepath.Join(dir, ".kafka_cleanshutdown")); err != nil {
		t.Fatalf("no clean-shutdown marker after Close: %v", err)
	}

	n2 := testkit.StartInProcess(t, "log.dirs", dir)
	if n2.Broker.ClusterID() != clusterID {
		t.Fatalf("cluster id changed: %s -> %s", clusterID, n2.Broker.ClusterID())
	}
	adm2, _ := n2.Admin(t)
	topics, err := adm2.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !topics.Has("keep") || len(topics["keep"].Partitions) != 4 || topics["keep"].ID != created.ID {
		t.Fatalf("after restart: %+v", topics["keep"])
	}
	rcs, err := adm2.DescribeTopicConfigs(ctx, "keep")
	if err != nil {
		t.Fatal(err)
	}
	var seg, ret kadm.Config
	for _, c := range rcs[0].Configs {
		switch c.Key {
		case "segment.bytes":
			seg = c
		case "retention.ms":
			ret = c
		}
	}
	if seg.MaybeValue() != "1048576" || ret.MaybeValue() != "123456" || ret.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Fatalf("configs after restart: segment.bytes %+v retention.ms %+v", seg, ret)
	}
}

func TestMetadataAutoCreate(t *testing.T) {
	n := testkit.StartInProcess(t, "num.partitions", "3")
	_, cl := n.Admin(t)
	ctx := ctxT(t)
	ask := func(allow bool, topic string) *kmsg.MetadataResponse {
		req := kmsg.NewPtrMetadataRequest()
		req.AllowAutoTopicCreation = allow
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if r := ask(false, "maybe"); r.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("disallowed auto-create: %d", r.Topics[0].ErrorCode)
	}
	if r := ask(true, "maybe"); r.Topics[0].ErrorCode != 0 || len(r.Topics[0].Partitions) != 3 {
		t.Fatalf("auto-create: %+v", r.Topics[0])
	}

	off := testkit.StartInProcess(t, "auto.create.topics.enable", "false")
	_, cl2 := off.Admin(t)
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("x")
	req.Topics, req.AllowAutoTopicCreation = append(req.Topics, rt), true
	resp, err := req.RequestWith(ctx, cl2)
	if err != nil || resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("broker-disabled auto-create: %v %+v", err, resp)
	}
}

func TestInterruptedDeletionResumesOnStart(t *testing.T) {
	dir := t.TempDir()
	n := testkit.StartInProcess(t, "log.dirs", dir)
	adm, _ := n.Admin(t)
	ctx := ctxT(t)
	if r, err := adm.CreateTopic(ctx, 2, 1, nil, "doomed"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	n.Close()

	// Simulate a crash between persisting the deletion and removing the
	// files: the snapshot says "deleting", the files are still there.
	store, snap, err := metadata.Open([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	snap.Deleting, snap.Topics = snap.Topics, nil
	if err := store.Save(snap); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "doomed-1")); err != nil {
		t.Fatal(err)
	}

	// The metadata actor logs "topic deleted" as it releases the name,
	// once the files are gone; a CreateTopics sent after that line is
	// queued behind it.
	deleted := actors.NewLogWatch("topic deleted")
	n2 := testkit.StartInProcessWith(t, testkit.InProcessOptions{Logger: slog.New(deleted)}, "log.dirs", dir)
	adm2, _ := n2.Admin(t)
	select {
	case <-deleted.Seen():
	case <-time.After(10 * time.Second):
		t.Fatal("the interrupted deletion did not finish after a restart")
	}
	// Creating it again succeeds and finds an empty partition directory.
	if r, err := adm2.CreateTopic(ctx, 1, 1, nil, "doomed"); err != nil || r.Err != nil {
		t.Fatalf("re-create after resumed deletion: %v %v", err, r.Err)
	}
	if _, err := os.Stat(filepath.Join(dir, "doomed-1")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("doomed-1 survived the resumed deletion: %v", err)
	}
}

func TestDataDirectorySpelledDifferentlyOnRestart(t *testing.T) {
	abs := t.TempDir()
	n := testkit.StartInProcess(t, "log.dirs", abs)
	adm, _ := n.Admin(t)
	if r, err := adm.CreateTopic(ctxT(t), 1, 1, nil, "moved"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	n.Close()
	// Same directory, through a different path.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(abs, link); err != nil {
		t.Fatal(err)
	}
	n2 := testkit.StartInProcess(t, "log.dirs", link)
	adm2, _ := n2.Admin(t)
	topics, err := adm2.ListTopics(ctxT(t))
	if err != nil || !topics.Has("moved") {
		t.Fatalf("topic lost after the data directory was named differently: %v %v", err, topics.Names())
	}
}

func TestDataDirectoryIsLocked(t *testing.T) {
	dir := t.TempDir()
	n := testkit.StartInProcess(t, "log.dirs", dir)
	cfg, err := config.Load(config.Input{Origin: "test", Values: map[string]string{"log.dirs": dir}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := actors.NewBroker(cfg, quietLogger()); !errors.Is(err, actors.ErrDirLocked) {
		t.Fatalf("second broker on the same directory: %v", err)
	}
	n.Close()
	b, err := actors.NewBroker(cfg, quietLogger())
	if err != nil {
		t.Fatalf("directory still locked after Close: %v", err)
	}
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}
