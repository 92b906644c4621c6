package group

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

func txnCommit(group string, pid int64, offset int64) *kmsg.TxnOffsetCommitRequest {
	r := kmsg.NewPtrTxnOffsetCommitRequest()
	r.Version, r.TransactionalID, r.Group, r.ProducerID, r.ProducerEpoch, r.Generation = 3, "app", group, pid, 0, -1
	t := kmsg.NewTxnOffsetCommitRequestTopic()
	t.Topic = "in"
	p := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	p.Partition, p.Offset = 0, offset
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return r
}

// fetched is group g's committed offset of in-0 (-1: none) and its code,
// stable or not.
func fetched(h *harness, g string, stable bool) (int64, kerr.Code) {
	h.t.Helper()
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version, r.Group, r.RequireStable = 7, g, stable
	t := kmsg.NewOffsetFetchRequestTopic()
	t.Topic, t.Partitions = "in", []int32{0}
	r.Topics = append(r.Topics, t)
	resp := h.reply(h.send(r, "c")).(*kmsg.OffsetFetchResponse)
	p := resp.Topics[0].Partitions[0]
	return p.Offset, kerr.Code(p.ErrorCode)
}

func TestTxnOffsetsWaitForTheirMarker(t *testing.T) {
	h := newHarness(t)
	h.holdAppends = true
	id := h.send(txnCommit("g", 7, 42), "p")
	if len(h.held) != 1 || h.held[0].Txn == nil || h.held[0].Txn.ProducerID != 7 {
		t.Fatalf("appends %+v, want one transactional batch of producer 7", h.held)
	}
	h.holdAppends = false
	h.completeAppends()
	h.wantCode(id, kerr.None)
	if off, code := fetched(h, "g", false); off != -1 || code != kerr.None {
		t.Fatalf("before the marker: offset %d (%v), want none", off, code)
	}
	if _, code := fetched(h, "g", true); code != kerr.UnstableOffsetCommit {
		t.Fatalf("stable fetch before the marker: %v, want UNSTABLE_OFFSET_COMMIT", code)
	}
	h.c.CompleteTxn(7, true)
	if off, code := fetched(h, "g", true); off != 42 || code != kerr.None {
		t.Fatalf("after the COMMIT marker: offset %d (%v), want 42", off, code)
	}

	h.send(txnCommit("g", 7, 50), "p")
	h.c.CompleteTxn(7, false)
	if off, _ := fetched(h, "g", true); off != 42 {
		t.Fatalf("after an ABORT marker: offset %d, want 42 still", off)
	}
}

func TestTxnOffsetsReplay(t *testing.T) {
	h := newHarness(t)
	key, value := OffsetKeyBytes("g", "in", 0), OffsetValueBytes(OffsetValue{Offset: 9, LeaderEpoch: -1, ExpireTimestamp: -1})
	key2, value2 := OffsetKeyBytes("g", "in", 0), OffsetValueBytes(OffsetValue{Offset: 11, LeaderEpoch: -1, ExpireTimestamp: -1})
	h.c.BeginLoad()
	if err := h.c.ReplayTxn(3, key, value); err != nil {
		t.Fatal(err)
	}
	h.c.ReplayMarker(3, true)
	if err := h.c.ReplayTxn(4, key2, value2); err != nil { // still open at the end of the log
		t.Fatal(err)
	}
	h.apply(h.c.EndLoad(h.now))
	if off, _ := fetched(h, "g", false); off != 9 {
		t.Fatalf("replayed offset %d, want 9 (11 is still in an open transaction)", off)
	}
	if _, code := fetched(h, "g", true); code != kerr.UnstableOffsetCommit {
		t.Fatalf("stable fetch with a transaction open: %v", code)
	}
	h.c.CompleteTxn(4, true)
	if off, _ := fetched(h, "g", true); off != 11 {
		t.Fatalf("after the marker: %d, want 11", off)
	}
}

func TestTxnOffsetCommitChecksTheMember(t *testing.T) {
	h := newHarness(t)
	r := txnCommit("g", 1, 5)
	r.MemberID, r.Generation = "nobody", 3
	id := h.send(r, "p")
	resp := h.reply(id).(*kmsg.TxnOffsetCommitResponse)
	if code := kerr.Code(resp.Topics[0].Partitions[0].ErrorCode); code != kerr.UnknownMemberID {
		t.Fatalf("unknown member: %v", code)
	}
}
