package wire

import (
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

func TestTableWellFormed(t *testing.T) {
	seen := map[int16]bool{}
	for _, a := range allRows() {
		if seen[a.Key] {
			t.Errorf("key %d listed twice (APIs and plannedAPIs must not overlap)", a.Key)
		}
		seen[a.Key] = true
		if a.Min < 0 || a.Accept < a.Min || a.Max < a.Accept {
			t.Errorf("%s: bad range %+v", APIName(a.Key), a)
		}
		r := kmsg.RequestForKey(a.Key)
		if r == nil || a.Max > r.MaxVersion() {
			t.Errorf("%s: max %d beyond what kmsg can decode", APIName(a.Key), a.Max)
		}
	}
	for _, a := range APIs {
		if got, ok := LookupAPI(a.Key); !ok || got != a {
			t.Errorf("LookupAPI(%d) = %+v, %v", a.Key, got, ok)
		}
		if !Accepts(a.Key, a.Accept) || !Accepts(a.Key, a.Max) || Accepts(a.Key, a.Max+1) || Accepts(a.Key, a.Accept-1) {
			t.Errorf("%s: Accepts disagrees with the row", APIName(a.Key))
		}
	}
	for _, a := range plannedAPIs {
		if _, ok := LookupAPI(a.Key); ok || Accepts(a.Key, a.Max) {
			t.Errorf("%s: planned API is served", APIName(a.Key))
		}
	}
}

// clientNeeds is what the clients that pin versions send without looking
// at the broker's minimum (reference/kafka-protocol.md §1c/§1d). Each
// entry is a version the broker must accept once the API is enabled.
var clientNeeds = []struct {
	client   string
	key, ver int16
}{
	{"kafka-go Conn", 18, 0}, {"kafka-python 2.0", 18, 0}, {"kafkajs 2.2.4", 18, 2}, {"librdkafka 2.0", 18, 3}, {"sarama", 18, 3},
	{"kafka-go Conn", 3, 1}, {"kafka-python 2.0", 3, 1}, {"kafka-go Conn", 3, 6},
	{"kafka-go <= 0.4.47", 19, 0}, {"kafka-go <= 0.4.47", 20, 0}, {"sarama < 1.1 config", 32, 0},
	{"kafkajs 2.2.4", 0, 7}, {"kafka-python 2.0", 0, 7}, {"librdkafka 2.0", 0, 7}, {"kafka-go Conn", 0, 3}, {"sarama", 0, 3},
	{"kafka-python 2.0", 1, 4}, {"kafkajs 2.2.4", 1, 11}, {"librdkafka 2.0", 1, 11}, {"kafka-go Conn", 1, 5}, {"kafka-go Conn", 1, 10},
	{"kafka-go Conn", 2, 1}, {"kafka-python 2.0", 2, 1},
	{"kafka-go Conn", 8, 2}, {"kafka-python 2.0", 8, 2}, {"kafkajs 2.2.4", 8, 5},
	{"kafka-go Conn", 9, 1}, {"kafka-python 2.0", 9, 1}, {"kafkajs 2.2.4", 9, 4},
	{"kafka-go Conn", 10, 0}, {"kafka-python 2.0", 10, 0},
	{"kafka-go <= 0.4.47", 11, 1}, {"sarama <= 1.40", 11, 1}, {"kafka-python 2.0", 11, 2}, {"kafkajs 2.2.4", 11, 5},
	{"kafka-go Conn", 12, 0}, {"kafka-go Conn", 13, 0}, {"kafka-go Conn", 14, 0},
	{"kafka-python 2.0", 12, 1}, {"kafka-python 2.0", 13, 1}, {"kafka-python 2.0", 14, 1},
	{"kafkajs 2.2.4", 22, 1}, {"librdkafka 2.0", 24, 0}, {"librdkafka 2.0", 25, 0},
	{"kafkajs 2.2.4", 26, 1}, {"kafkajs 2.2.4", 28, 1},
	{"librdkafka >= 2.1", 23, 2},
}

// TestRangesServeEveryClient checks the served and planned ranges against
// the versions pinned clients send, and the two advertising tricks that
// librdkafka 2.0 needs: Produce and JoinGroup advertised from 0.
func TestRangesServeEveryClient(t *testing.T) {
	rows := map[int16]APIRange{}
	for _, a := range allRows() {
		rows[a.Key] = a
	}
	for _, n := range clientNeeds {
		a, ok := rows[n.key]
		if !ok || n.ver < a.Accept || n.ver > a.Max {
			t.Errorf("%s sends %s v%d; table row %+v does not accept it", n.client, APIName(n.key), n.ver, a)
		}
	}
	if p := rows[0]; p.Min != 0 || p.Accept != 3 || p.Max >= 12 {
		t.Errorf("Produce must be advertised from 0, accepted from 3, below 12 (KIP-890): %+v", p)
	}
	if j := rows[11]; j.Min != 0 {
		t.Errorf("JoinGroup must be advertised from 0: %+v", j)
	}
	// Fetch v13 names topics by the ids the metadata persists; 17 is what
	// Kafka 3.9 serves, and the encoder's maximum.
	if f := rows[1]; f.Max > FetchMaxVersion {
		t.Errorf("Fetch above the encoder's %d: %+v", FetchMaxVersion, f)
	}
}

func apiVersionsRequest(version int16, name, ver string) *Request {
	body := &kmsg.ApiVersionsRequest{Version: version, ClientSoftwareName: name, ClientSoftwareVersion: ver}
	return &Request{Header: RequestHeader{APIKey: KeyApiVersions, APIVersion: version}, Body: body}
}

func TestHandleApiVersions(t *testing.T) {
	for v := int16(0); v <= 4; v++ {
		resp := HandleApiVersions(apiVersionsRequest(v, "librdkafka", "2.0.2"))
		if resp.Version != v || resp.ErrorCode != 0 {
			t.Fatalf("v%d: version %d error %d", v, resp.Version, resp.ErrorCode)
		}
		if len(resp.ApiKeys) != len(APIs) {
			t.Fatalf("v%d: %d keys, want %d", v, len(resp.ApiKeys), len(APIs))
		}
		for i, k := range resp.ApiKeys {
			a := APIs[i]
			if k.ApiKey != a.Key || k.MinVersion != a.Min || k.MaxVersion != a.Max {
				t.Fatalf("v%d: key %+v, table %+v", v, k, a)
			}
		}
		if len(resp.SupportedFeatures) != 0 || len(resp.FinalizedFeatures) != 0 {
			t.Fatalf("v%d: features advertised", v)
		}
		// What the client reads back is the table.
		frame := AppendResponse(nil, 11, resp)
		back := &kmsg.ApiVersionsResponse{Version: v}
		if err := back.ReadFrom(frame[8:]); err != nil {
			t.Fatalf("v%d: client cannot read response: %v", v, err)
		}
		if len(back.ApiKeys) != len(APIs) || back.ApiKeys[1].MaxVersion != APIs[1].Max {
			t.Fatalf("v%d: decoded %+v", v, back.ApiKeys)
		}
	}
}

func TestHandleApiVersionsKIP511(t *testing.T) {
	frame := encodeFrame(sampleRequest(KeyApiVersions, 4), 3, "java")
	binary.BigEndian.PutUint16(frame[2:], 7)
	req, err := DecodeRequest(frame)
	if err != nil {
		t.Fatal(err)
	}
	resp := HandleApiVersions(req)
	if resp.Version != 0 || kerr.Code(resp.ErrorCode) != kerr.UnsupportedVersion {
		t.Fatalf("version %d error %d", resp.Version, resp.ErrorCode)
	}
	row, _ := LookupAPI(KeyApiVersions)
	if len(resp.ApiKeys) != 1 || resp.ApiKeys[0].ApiKey != KeyApiVersions || resp.ApiKeys[0].MaxVersion != row.Max || resp.ApiKeys[0].MinVersion != row.Min {
		t.Fatalf("keys %+v", resp.ApiKeys)
	}
	// Encoded as v0 body after a v0 header: error code right after the
	// correlation id.
	out := AppendResponse(nil, 3, resp)
	if code := int16(binary.BigEndian.Uint16(out[8:])); code != 35 {
		t.Fatalf("error code at fixed offset = %d", code)
	}
}

func TestHandleApiVersionsSoftwareName(t *testing.T) {
	cases := []struct {
		name, ver string
		ok        bool
	}{
		{"librdkafka", "2.0.2", true},
		{"apache-kafka-java", "4.0.0", true},
		{"a", "1", true},
		{"kgo", "v1.22.3-rc.1", true},
		{"", "1.0", false},
		{"kafka", "", false},
		{"-kafka", "1", false},
		{"kafka.", "1", false},
		{"kafka go", "1", false},
		{"kafka_go", "1", false},
		{"kafka", "1.0+build", false},
		{"ka\xffka", "1", false},
	}
	for _, c := range cases {
		resp := HandleApiVersions(apiVersionsRequest(3, c.name, c.ver))
		got := resp.ErrorCode == 0
		if got != c.ok {
			t.Errorf("name %q version %q: error code %d", c.name, c.ver, resp.ErrorCode)
		}
		if !c.ok && kerr.Code(resp.ErrorCode) != kerr.InvalidRequest {
			t.Errorf("name %q: code %d, want INVALID_REQUEST", c.name, resp.ErrorCode)
		}
	}
	// v0-v2 carry no software name: an empty one is fine there.
	if resp := HandleApiVersions(apiVersionsRequest(2, "", "")); resp.ErrorCode != 0 {
		t.Fatalf("v2 without name: %d", resp.ErrorCode)
	}
}
