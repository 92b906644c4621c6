package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// memFile is an in-memory RegionFile (no descriptor: the copy path).
type memFile struct{ *bytes.Reader }

func (memFile) SysFd() (int, bool) { return 0, false }

func newMemFile(b []byte) memFile { return memFile{bytes.NewReader(b)} }

// randomFetch builds a random response whose record data is drawn from
// file (as regions) and from fresh byte slices; want is each partition's
// record bytes as a client must see them.
func randomFetch(rng *rand.Rand, version int16, file []byte, f RegionFile) (r *FetchResponse, want [][][]byte) {
	r = &FetchResponse{
		Version:        version,
		ThrottleMillis: rng.Int32N(1000),
		ErrorCode:      int16(rng.IntN(3)),
		SessionID:      rng.Int32(),
	}
	for i := range rng.IntN(3) {
		n := NodeEndpoint{NodeID: int32(i), Host: string(bytes.Repeat([]byte{'h'}, rng.IntN(20))), Port: rng.Int32N(65536)}
		if rng.IntN(2) == 0 {
			rack := string(bytes.Repeat([]byte{'r'}, rng.IntN(5)))
			n.Rack = &rack
		}
		r.NodeEndpoints = append(r.NodeEndpoints, n)
	}
	for range rng.IntN(4) {
		t := FetchTopic{Name: string(bytes.Repeat([]byte{'a' + byte(rng.IntN(26))}, rng.IntN(40)))}
		for i := range t.ID {
			t.ID[i] = byte(rng.Uint32())
		}
		var tw [][]byte
		for range rng.IntN(5) {
			p := FetchPartition{
				Partition:            rng.Int32N(1000),
				ErrorCode:            int16(rng.IntN(5)),
				HighWatermark:        rng.Int64(),
				LastStableOffset:     rng.Int64(),
				LogStartOffset:       rng.Int64(),
				PreferredReadReplica: rng.Int32N(5) - 1,
			}
			switch rng.IntN(3) {
			case 1:
				p.AbortedTransactions = []AbortedTransaction{}
			case 2:
				for range 1 + rng.IntN(3) {
					p.AbortedTransactions = append(p.AbortedTransactions, AbortedTransaction{rng.Int64(), rng.Int64()})
				}
			}
			if rng.IntN(2) == 0 {
				p.DivergingEpoch = &EpochEndOffset{rng.Int32(), rng.Int64()}
			}
			if rng.IntN(2) == 0 {
				p.CurrentLeader = &LeaderAndEpoch{rng.Int32N(10), rng.Int32()}
			}
			p.DurableHonoured = rng.IntN(2) == 0
			var pw []byte
			for range rng.IntN(4) {
				if rng.IntN(2) == 0 {
					pos := rng.IntN(len(file))
					n := rng.IntN(len(file) - pos + 1)
					p.Records = append(p.Records, Chunk{File: f, Position: int64(pos), Length: int64(n)})
					pw = append(pw, file[pos:pos+n]...)
				} else {
					b := make([]byte, rng.IntN(200))
					for i := range b {
						b[i] = byte(rng.Uint32())
					}
					p.Records = append(p.Records, Chunk{Bytes: b})
					pw = append(pw, b...)
				}
			}
			t.Partitions = append(t.Partitions, p)
			tw = append(tw, pw)
		}
		r.Topics = append(r.Topics, t)
		want = append(want, tw)
	}
	return r, want
}

// checkFetch flattens resp and decodes it with kmsg, comparing every field
// the version carries.
func checkFetch(t *testing.T, resp *Response, corr int32, r *FetchResponse, want [][][]byte) {
	t.Helper()
	v := r.Version
	flat, err := resp.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(flat)) != resp.Len() {
		t.Fatalf("v%d: Len %d, flattened %d", v, resp.Len(), len(flat))
	}
	if got := binary.BigEndian.Uint32(flat); int(got) != len(flat)-4 {
		t.Fatalf("v%d: size prefix %d, frame %d", v, got, len(flat)-4)
	}
	if got := int32(binary.BigEndian.Uint32(flat[4:])); got != corr {
		t.Fatalf("v%d: correlation id %d", v, got)
	}
	body := flat[8:]
	if v >= 12 {
		if body[0] != 0 {
			t.Fatalf("v%d: response header tags %d", v, body[0])
		}
		body = body[1:]
	}
	var k kmsg.FetchResponse
	k.Version = v
	if err := k.ReadFrom(body); err != nil {
		t.Fatalf("v%d: kmsg cannot decode: %v", v, err)
	}
	// kmsg ignores trailing bytes: check our encoding has none by
	// re-encoding what it read.
	if re := k.AppendTo(nil); !bytes.Equal(re, body) {
		t.Fatalf("v%d: kmsg re-encoding differs from ours (%d vs %d bytes)", v, len(re), len(body))
	}
	if k.ThrottleMillis != r.ThrottleMillis {
		t.Fatalf("v%d: throttle", v)
	}
	if v >= 7 && (k.ErrorCode != r.ErrorCode || k.SessionID != r.SessionID) {
		t.Fatalf("v%d: error code / session id", v)
	}
	if len(k.Topics) != len(r.Topics) {
		t.Fatalf("v%d: %d topics, want %d", v, len(k.Topics), len(r.Topics))
	}
	wantNodes := r.NodeEndpoints
	if v < 16 {
		wantNodes = nil
	}
	if len(k.Brokers) != len(wantNodes) {
		t.Fatalf("v%d: %d node endpoints, want %d", v, len(k.Brokers), len(wantNodes))
	}
	for i, b := range k.Brokers {
		n := wantNodes[i]
		if b.NodeID != n.NodeID || b.Host != n.Host || b.Port != n.Port || (b.Rack == nil) != (n.Rack == nil) || b.Rack != nil && *b.Rack != *n.Rack {
			t.Fatalf("v%d: node endpoint %d: %+v, want %+v", v, i, b, n)
		}
	}
	for ti, kt := range k.Topics {
		rt := &r.Topics[ti]
		if v <= 12 && kt.Topic != rt.Name || v >= 13 && kt.TopicID != rt.ID {
			t.Fatalf("v%d: topic %d identity", v, ti)
		}
		if len(kt.Partitions) != len(rt.Partitions) {
			t.Fatalf("v%d: topic %d partitions", v, ti)
		}
		for pi, kp := range kt.Partitions {
			rp := &rt.Partitions[pi]
			if kp.Partition != rp.Partition || kp.ErrorCode != rp.ErrorCode || kp.HighWatermark != rp.HighWatermark || kp.LastStableOffset != rp.LastStableOffset {
				t.Fatalf("v%d: partition %d/%d fixed fields %+v", v, ti, pi, kp)
			}
			if v >= 5 && kp.LogStartOffset != rp.LogStartOffset || v < 5 && kp.LogStartOffset != -1 {
				t.Fatalf("v%d: log start offset", v)
			}
			if (kp.AbortedTransactions == nil) != (rp.AbortedTransactions == nil) || len(kp.AbortedTransactions) != len(rp.AbortedTransactions) {
				t.Fatalf("v%d: aborted transactions %v vs %v", v, kp.AbortedTransactions, rp.AbortedTransactions)
			}
			for i, a := range kp.AbortedTransactions {
				if a.ProducerID != rp.AbortedTransactions[i].ProducerID || a.FirstOffset != rp.AbortedTransactions[i].FirstOffset {
					t.Fatalf("v%d: aborted transaction %d", v, i)
				}
			}
			if v >= 11 && kp.PreferredReadReplica != rp.PreferredReadReplica || v < 11 && kp.PreferredReadReplica != -1 {
				t.Fatalf("v%d: preferred read replica", v)
			}
			de, cl := kp.DivergingEpoch, kp.CurrentLeader
			if v >= 12 && rp.DivergingEpoch != nil {
				if de.Epoch != rp.DivergingEpoch.Epoch || de.EndOffset != rp.DivergingEpoch.EndOffset {
					t.Fatalf("v%d: diverging epoch", v)
				}
			} else if de.Epoch != -1 || de.EndOffset != -1 {
				t.Fatalf("v%d: unexpected diverging epoch", v)
			}
			if v >= 12 && rp.CurrentLeader != nil {
				if cl.LeaderID != rp.CurrentLeader.LeaderID || cl.LeaderEpoch != rp.CurrentLeader.LeaderEpoch {
					t.Fatalf("v%d: current leader", v)
				}
			} else if cl.LeaderID != -1 || cl.LeaderEpoch != -1 {
				t.Fatalf("v%d: unexpected current leader", v)
			}
			if got := FetchDurableHonoured(&kp.UnknownTags); got != (v >= 12 && rp.DurableHonoured) {
				t.Fatalf("v%d: durable honoured tag read %v, encoded %v", v, got, rp.DurableHonoured)
			}
			if !bytes.Equal(kp.RecordBatches, want[ti][pi]) || kp.RecordBatches == nil {
				t.Fatalf("v%d: partition %d/%d records differ (%d vs %d bytes)", v, ti, pi, len(kp.RecordBatches), len(want[ti][pi]))
			}
		}
	}
}

func TestFetchEncodeEveryVersion(t *testing.T) {
	file := make([]byte, 10_000)
	for i := range file {
		file[i] = byte(i * 7)
	}
	f := newMemFile(file)
	rng := rand.New(rand.NewPCG(7, 9))
	for v := int16(FetchMinVersion); v <= FetchMaxVersion; v++ {
		for range 200 {
			r, want := randomFetch(rng, v, file, f)
			corr := rng.Int32()
			resp, err := EncodeFetchResponse(corr, r)
			if err != nil {
				t.Fatalf("v%d: %v", v, err)
			}
			checkFetch(t, resp, corr, r, want)
		}
	}
}

// TestFetchZeroCopy: record chunks reach the response as they are (file
// regions stay regions, byte slices are not copied) and only the encoder's
// own bytes sit between them.
func TestFetchZeroCopy(t *testing.T) {
	file := bytes.Repeat([]byte("batch"), 1000)
	f := newMemFile(file)
	inline := []byte("inline-batch-bytes")
	r := &FetchResponse{Version: 12, Topics: []FetchTopic{{Name: "t", Partitions: []FetchPartition{
		{Partition: 0, Records: []Chunk{{File: f, Position: 10, Length: 4000}, {Bytes: inline}}},
		{Partition: 1},
		{Partition: 2, Records: []Chunk{{File: f, Position: 0, Length: 0}, {File: f, Position: 5, Length: 5}}},
	}}}}
	resp, err := EncodeFetchResponse(1, r)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, c := range resp.Chunks {
		switch {
		case c.File != nil:
			kinds = append(kinds, "file")
		case len(c.Bytes) > 0 && &c.Bytes[0] == &inline[0]:
			kinds = append(kinds, "inline")
		default:
			kinds = append(kinds, "meta")
		}
	}
	want := []string{"meta", "file", "inline", "meta", "file", "meta"}
	if len(kinds) != len(want) {
		t.Fatalf("chunks %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("chunks %v, want %v", kinds, want)
		}
	}
	if resp.Chunks[1].Position != 10 || resp.Chunks[1].Length != 4000 {
		t.Fatalf("region changed: %+v", resp.Chunks[1])
	}
}

func TestFetchEncodeErrors(t *testing.T) {
	for _, v := range []int16{3, 18, -1} {
		if _, err := EncodeFetchResponse(0, &FetchResponse{Version: v}); !errors.Is(err, ErrFetchVersion) {
			t.Fatalf("v%d: %v", v, err)
		}
	}
	f := newMemFile(nil)
	neg := &FetchResponse{Version: 4, Topics: []FetchTopic{{Partitions: []FetchPartition{{Records: []Chunk{{File: f, Position: -1, Length: 3}}}}}}}
	if _, err := EncodeFetchResponse(0, neg); !errors.Is(err, ErrFetchChunk) {
		t.Fatalf("negative position: %v", err)
	}
	huge := &FetchResponse{Version: 4, Topics: []FetchTopic{{Partitions: []FetchPartition{{Records: []Chunk{
		{File: f, Length: 1 << 30}, {File: f, Length: 1 << 30},
	}}}}}}
	if _, err := EncodeFetchResponse(0, huge); !errors.Is(err, ErrFetchTooLarge) {
		t.Fatalf("2 GiB partition: %v", err)
	}
	long := &FetchResponse{Version: 4, Topics: []FetchTopic{{Name: string(make([]byte, 40000))}}}
	if _, err := EncodeFetchResponse(0, long); !errors.Is(err, ErrFetchTopic) {
		t.Fatalf("long topic name: %v", err)
	}
	// A region past the end of its file fails on the copy path.
	short := &FetchResponse{Version: 4, Topics: []FetchTopic{{Partitions: []FetchPartition{{Records: []Chunk{{File: newMemFile([]byte("abc")), Length: 10}}}}}}}
	resp, err := EncodeFetchResponse(0, short)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resp.AppendTo(nil); !errors.Is(err, ErrShortRegion) {
		t.Fatalf("short region: %v", err)
	}
}

// FuzzFetchEncode is a property test: random responses at every version
// decode in kmsg to the same fields.
func FuzzFetchEncode(f *testing.F) {
	for _, e := range fetchSeeds() {
		f.Add(e.args[0].(int64), e.args[1].(byte))
	}
	file := make([]byte, 4096)
	for i := range file {
		file[i] = byte(i)
	}
	mf := newMemFile(file)
	f.Fuzz(func(t *testing.T, seed int64, version byte) {
		v := int16(FetchMinVersion + int(version)%(FetchMaxVersion-FetchMinVersion+1))
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(version)))
		r, want := randomFetch(rng, v, file, mf)
		corr := rng.Int32()
		resp, err := EncodeFetchResponse(corr, r)
		if err != nil {
			t.Fatal(err)
		}
		checkFetch(t, resp, corr, r, want)
	})
}

func fetchSeeds() []corpusEntry {
	return []corpusEntry{
		{"v4", []any{int64(1), byte(0)}},
		{"v12", []any{int64(2), byte(8)}},
		{"v13", []any{int64(3), byte(9)}},
	}
}

func init() { extraCorporaFns["FuzzFetchEncode"] = fetchSeeds }
