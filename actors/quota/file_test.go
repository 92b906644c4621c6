package quota

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/segment/vfs"
)

// Quotas altered through a Manager are read back by the next one from
// the data directory, <default> parts included.
func TestFileRoundTrip(t *testing.T) {
	fsys := vfs.NewMemFS()
	if err := fsys.MkdirAll("/data"); err != nil {
		t.Fatal(err)
	}
	m := NewManager(nil, FilePersist(fsys, "/data"), DefaultWindow, nil)
	if m.Enabled() {
		t.Fatal("a manager without quotas is enabled")
	}
	req := kmsg.NewPtrAlterClientQuotasRequest()
	req.Entries = []kmsg.AlterClientQuotasRequestEntry{
		alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyProducerByteRate, 1024, false)}, comp(TypeUser, kmsg.StringPtr("alice"))),
		alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyRequestPercentage, 50, false)}, comp(TypeUser, nil), comp(TypeClientID, nil)),
	}
	if _, err := m.Alter(req); err != nil {
		t.Fatal(err)
	}
	if !m.Enabled() {
		t.Fatal("quotas set, manager not enabled")
	}
	got, err := LoadFile(fsys, "/data")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[Entity{User: Named("alice")}][KeyProducerByteRate] != 1024 ||
		got[Entity{User: DefaultPart(), Client: DefaultPart()}][KeyRequestPercentage] != 50 {
		t.Fatalf("read back %v", got)
	}
	req.Entries = []kmsg.AlterClientQuotasRequestEntry{
		alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyProducerByteRate, 0, true)}, comp(TypeUser, kmsg.StringPtr("alice"))),
		alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyRequestPercentage, 0, true)}, comp(TypeUser, nil), comp(TypeClientID, nil)),
	}
	if _, err := m.Alter(req); err != nil {
		t.Fatal(err)
	}
	if m.Enabled() {
		t.Fatal("every quota removed, manager still enabled")
	}
	if got, err = LoadFile(fsys, "/data"); err != nil || len(got) != 0 {
		t.Fatalf("read back %v, %v", got, err)
	}
}
