package quota

import (
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

func alterEntry(ops []kmsg.AlterClientQuotasRequestEntryOp, comps ...[2]*string) kmsg.AlterClientQuotasRequestEntry {
	en := kmsg.NewAlterClientQuotasRequestEntry()
	for _, c := range comps {
		ec := kmsg.NewAlterClientQuotasRequestEntryEntity()
		ec.Type, ec.Name = *c[0], c[1]
		en.Entity = append(en.Entity, ec)
	}
	en.Ops = ops
	return en
}

func op(key string, v float64, remove bool) kmsg.AlterClientQuotasRequestEntryOp {
	return kmsg.AlterClientQuotasRequestEntryOp{Key: key, Value: v, Remove: remove}
}

func comp(typ string, name *string) [2]*string { return [2]*string{&typ, name} }

func TestAlterValidation(t *testing.T) {
	alice := kmsg.StringPtr("alice")
	cases := []struct {
		name  string
		entry kmsg.AlterClientQuotasRequestEntry
		ok    bool
	}{
		{"user", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyProducerByteRate, 1024, false)}, comp(TypeUser, alice)), true},
		{"default user and client", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyRequestPercentage, 12.5, false)}, comp(TypeUser, nil), comp(TypeClientID, nil)), true},
		{"mutation rate", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyControllerMutationRate, 2.5, false)}, comp(TypeClientID, alice)), true},
		{"remove absent", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyConsumerByteRate, 0, true)}, comp(TypeUser, alice)), true},
		{"unknown key", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op("bytes", 1, false)}, comp(TypeUser, alice)), false},
		{"unknown type", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyProducerByteRate, 1, false)}, comp("group", alice)), false},
		{"duplicate type", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyProducerByteRate, 1, false)}, comp(TypeUser, alice), comp(TypeUser, nil)), false},
		{"no entity", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyProducerByteRate, 1, false)}), false},
		{"default ip", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyConnectionCreationRate, 10, false)}, comp(TypeIP, nil)), true},
		{"ip", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyConnectionCreationRate, 10, false)}, comp(TypeIP, kmsg.StringPtr("10.0.0.1"))), true},
		{"ip not an address", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyConnectionCreationRate, 10, false)}, comp(TypeIP, kmsg.StringPtr("not an ip"))), false},
		{"ip with user", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyConnectionCreationRate, 10, false)}, comp(TypeIP, nil), comp(TypeUser, alice)), false},
		{"ip byte rate", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyProducerByteRate, 10, false)}, comp(TypeIP, nil)), false},
		{"user connection rate", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyConnectionCreationRate, 10, false)}, comp(TypeUser, alice)), false},
		{"fractional connection rate", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyConnectionCreationRate, 1.5, false)}, comp(TypeIP, nil)), false},
		{"empty user", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyProducerByteRate, 1, false)}, comp(TypeUser, kmsg.StringPtr(""))), false},
		{"duplicate key", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyProducerByteRate, 1, false), op(KeyProducerByteRate, 0, true)}, comp(TypeUser, alice)), false},
		{"fractional byte rate", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyProducerByteRate, 1.5, false)}, comp(TypeUser, alice)), false},
		{"negative", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyRequestPercentage, -1, false)}, comp(TypeUser, alice)), false},
		{"NaN", alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyRequestPercentage, math.NaN(), false)}, comp(TypeUser, alice)), false},
	}
	for _, c := range cases {
		req := kmsg.NewPtrAlterClientQuotasRequest()
		req.Entries = []kmsg.AlterClientQuotasRequestEntry{c.entry}
		next, changed, resp := PlanAlter(Configs{}, req)
		code := resp.Entries[0].ErrorCode
		if c.ok != (code == 0) {
			t.Errorf("%s: error %v, want ok=%v", c.name, kerr.Code(code), c.ok)
		}
		if !c.ok && (code != kerr.InvalidRequest.Int16() || len(changed) != 0 || len(next) != 0) {
			t.Errorf("%s: refused with %v, changed %v", c.name, kerr.Code(code), changed)
		}
		req.ValidateOnly = true
		if next, changed, _ := PlanAlter(Configs{}, req); len(changed) != 0 || len(next) != 0 {
			t.Errorf("%s: validate_only changed %v", c.name, changed)
		}
	}
}

// Entries are independent: a bad one does not stop a good one, and a
// removal of the last key drops the entity.
func TestAlterEntriesApart(t *testing.T) {
	alice := kmsg.StringPtr("alice")
	req := kmsg.NewPtrAlterClientQuotasRequest()
	req.Entries = []kmsg.AlterClientQuotasRequestEntry{
		alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op("nope", 1, false)}, comp(TypeClientID, alice)),
		alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyProducerByteRate, 100, false)}, comp(TypeUser, alice)),
	}
	next, changed, resp := PlanAlter(Configs{}, req)
	if resp.Entries[0].ErrorCode == 0 || resp.Entries[1].ErrorCode != 0 || len(changed) != 1 {
		t.Fatalf("entries %+v, changed %v", resp.Entries, changed)
	}
	if next[Entity{User: Named("alice")}][KeyProducerByteRate] != 100 {
		t.Fatalf("configs %v", next)
	}
	req.Entries = []kmsg.AlterClientQuotasRequestEntry{
		alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(KeyProducerByteRate, 0, true)}, comp(TypeUser, alice)),
	}
	if next, _, _ = PlanAlter(next, req); len(next) != 0 {
		t.Fatalf("after removal: %v", next)
	}
}

func describeReq(strict bool, comps ...kmsg.DescribeClientQuotasRequestComponent) *kmsg.DescribeClientQuotasRequest {
	r := kmsg.NewPtrDescribeClientQuotasRequest()
	r.Strict, r.Components = strict, comps
	return r
}

func filter(typ string, match kmsg.QuotasMatchType, name *string) kmsg.DescribeClientQuotasRequestComponent {
	return kmsg.DescribeClientQuotasRequestComponent{EntityType: typ, MatchType: match, Match: name}
}

func TestDescribeFilters(t *testing.T) {
	all := Configs{
		{User: Named("alice")}:                       {KeyProducerByteRate: 1},
		{User: Named("alice"), Client: Named("app")}: {KeyProducerByteRate: 2},
		{User: DefaultPart()}:                        {KeyConsumerByteRate: 3},
		{Client: Named("app")}:                       {KeyRequestPercentage: 4},
		{User: DefaultPart(), Client: DefaultPart()}: {KeyRequestPercentage: 5},
		{IP: Named("10.0.0.1")}:                      {KeyConnectionCreationRate: 6},
		{IP: DefaultPart()}:                          {KeyConnectionCreationRate: 7},
	}
	alice, app := kmsg.StringPtr("alice"), kmsg.StringPtr("app")
	cases := []struct {
		name string
		req  *kmsg.DescribeClientQuotasRequest
		want []string // entities, or nil for INVALID_REQUEST
	}{
		{"user alice strict", describeReq(true, filter(TypeUser, matchExact, alice)), []string{"users/alice"}},
		{"user alice", describeReq(false, filter(TypeUser, matchExact, alice)), []string{"users/alice", "users/alice/clients/app"}},
		{"default user", describeReq(false, filter(TypeUser, matchDefault, nil)), []string{"users/<default>", "users/<default>/clients/<default>"}},
		{"any user strict", describeReq(true, filter(TypeUser, matchAny, nil)), []string{"users/<default>", "users/alice"}},
		{"any client", describeReq(false, filter(TypeClientID, matchAny, nil)), []string{"clients/app", "users/<default>/clients/<default>", "users/alice/clients/app"}},
		{"client app strict", describeReq(true, filter(TypeClientID, matchExact, app)), []string{"clients/app"}},
		{"all", describeReq(false), []string{"clients/app", "ips/10.0.0.1", "ips/<default>", "users/<default>", "users/<default>/clients/<default>", "users/alice", "users/alice/clients/app"}},
		{"ip", describeReq(false, filter(TypeIP, matchAny, nil)), []string{"ips/10.0.0.1", "ips/<default>"}},
		{"default ip", describeReq(true, filter(TypeIP, matchDefault, nil)), []string{"ips/<default>"}},
		{"ip exact", describeReq(true, filter(TypeIP, matchExact, kmsg.StringPtr("10.0.0.1"))), []string{"ips/10.0.0.1"}},
		{"unknown type", describeReq(false, filter("group", matchAny, nil)), nil},
		{"duplicate type", describeReq(false, filter(TypeUser, matchAny, nil), filter(TypeUser, matchDefault, nil)), nil},
		{"exact without name", describeReq(false, filter(TypeUser, matchExact, nil)), nil},
		{"bad match type", describeReq(false, filter(TypeUser, 7, nil)), nil},
		{"ip with user", describeReq(false, filter(TypeIP, matchAny, nil), filter(TypeUser, matchAny, nil)), nil},
	}
	for _, c := range cases {
		resp := Describe(all, c.req)
		if c.want == nil {
			if resp.ErrorCode != kerr.InvalidRequest.Int16() || resp.Entries != nil {
				t.Errorf("%s: error %v, want INVALID_REQUEST", c.name, kerr.Code(resp.ErrorCode))
			}
			continue
		}
		var got []string
		for _, en := range resp.Entries {
			var e Entity
			for _, c := range en.Entity {
				p := DefaultPart()
				if c.Name != nil {
					p = Named(*c.Name)
				}
				switch c.Type {
				case TypeUser:
					e.User = p
				case TypeIP:
					e.IP = p
				default:
					e.Client = p
				}
			}
			got = append(got, e.String())
		}
		if resp.ErrorCode != 0 || len(got) != len(c.want) {
			t.Errorf("%s: got %v (error %v), want %v", c.name, got, kerr.Code(resp.ErrorCode), c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

// FuzzAlter feeds arbitrary entries: never a panic, every entry answered,
// and a refused entry changes nothing.
func FuzzAlter(f *testing.F) {
	f.Add("user", "alice", false, KeyProducerByteRate, 1024.0, false)
	f.Add("client-id", "", true, "x", -1.0, true)
	f.Fuzz(func(t *testing.T, typ, name string, dflt bool, key string, v float64, remove bool) {
		var n *string
		if !dflt {
			n = &name
		}
		req := kmsg.NewPtrAlterClientQuotasRequest()
		req.Entries = []kmsg.AlterClientQuotasRequestEntry{alterEntry([]kmsg.AlterClientQuotasRequestEntryOp{op(key, v, remove)}, comp(typ, n))}
		next, changed, resp := PlanAlter(Configs{}, req)
		if len(resp.Entries) != 1 {
			t.Fatalf("%d entries answered", len(resp.Entries))
		}
		if resp.Entries[0].ErrorCode != 0 && (len(changed) != 0 || len(next) != 0) {
			t.Fatalf("refused entry changed %v", changed)
		}
		for _, cfg := range next {
			for k, v := range cfg {
				if !IsKey(k) || checkValue(k, v) != "" {
					t.Fatalf("stored %s=%v", k, v)
				}
			}
		}
	})
}
