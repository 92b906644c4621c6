package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The Fetch response encoder. kmsg's FetchResponse.AppendTo copies record
// bytes into one buffer; a broker serving from log segments wants to leave
// them in the file and send them with sendfile(2). EncodeFetchResponse
// therefore writes everything except record data into one buffer and
// returns a Response whose chunks alternate between slices of that buffer
// and the caller's record chunks (file regions or byte slices), untouched.
// Every length field, the frame size included, is computed ahead from the
// chunk sizes.

// FetchMinVersion and FetchMaxVersion bound the versions
// EncodeFetchResponse writes: 4 is the first version whose records are
// RecordBatch v2 only, 12 the first flexible one, 13 the first with topic
// IDs instead of names, 16 the first with the NodeEndpoints tagged field
// (KIP-951). 14, 15 and 17 change only the request (14: tiered storage's
// error, 15: ReplicaState in place of ReplicaID, 17: ReplicaDirectoryID),
// so their responses are 13's and 16's.
const (
	FetchMinVersion = 4
	FetchMaxVersion = 17
)

// Fetch encoding errors.
var (
	ErrFetchVersion  = errors.New("wire: fetch response version outside 4-17")
	ErrFetchTooLarge = errors.New("wire: fetch response larger than the protocol's int32 sizes")
	ErrFetchChunk    = errors.New("wire: fetch record chunk with a negative position or length")
	ErrFetchTopic    = errors.New("wire: fetch topic name longer than 32767 bytes")
	ErrFetchEndpoint = errors.New("wire: fetch node endpoint host or rack longer than 32767 bytes")
)

// FetchResponse is the input of EncodeFetchResponse: the fields of a Fetch
// response of Version (4-17). Fields a version lacks are ignored.
type FetchResponse struct {
	Version        int16
	ThrottleMillis int32
	ErrorCode      int16 // v7+, top-level (fetch sessions)
	SessionID      int32 // v7+
	Topics         []FetchTopic
	// NodeEndpoints (v16+, tagged) are the brokers that partitions'
	// CurrentLeader name, so a client can go there without a Metadata
	// round trip (KIP-951); empty leaves the tag out.
	NodeEndpoints []NodeEndpoint
}

// NodeEndpoint is one broker's address in a Fetch response.
type NodeEndpoint struct {
	NodeID int32
	Host   string
	Port   int32
	Rack   *string // nil: none
}

// FetchTopic is one topic of a Fetch response.
type FetchTopic struct {
	Name       string   // v4-v12
	ID         [16]byte // v13+
	Partitions []FetchPartition
}

// FetchPartition is one partition of a Fetch response.
type FetchPartition struct {
	Partition        int32
	ErrorCode        int16
	HighWatermark    int64
	LastStableOffset int64 // v4+
	LogStartOffset   int64 // v5+
	// AbortedTransactions (v4+) is nil for a null array (read_uncommitted
	// fetches) and non-nil, possibly empty, otherwise.
	AbortedTransactions  []AbortedTransaction
	PreferredReadReplica int32 // v11+, -1 for none

	// DivergingEpoch (v12+, tagged) is set when a follower's last fetched
	// epoch diverges from the leader's log; nil leaves the tag out.
	DivergingEpoch *EpochEndOffset
	// CurrentLeader (v12+, tagged) tells a client fetching from a stale
	// leader where the partition moved (KIP-951); nil leaves it out.
	CurrentLeader *LeaderAndEpoch
	// DurableHonoured (v12+, samsa's FetchDurableHonouredTag) tells a
	// samsa follower this leader counted the durable end its fetch gave
	// (fetch_durable.go); false leaves the tag out.
	DurableHonoured bool

	// Records is the partition's record data in order: file regions
	// (Chunk.File set) and/or byte slices. Their total is the records
	// length on the wire; an empty list encodes empty (not null) records.
	// The chunks are placed in the Response as they are, so byte slices
	// must stay untouched until the response is written (Response.Done).
	Records []Chunk
}

// AbortedTransaction is an aborted transaction overlapping the fetched
// range (read_committed).
type AbortedTransaction struct {
	ProducerID  int64
	FirstOffset int64
}

// EpochEndOffset is a leader epoch and the offset where it ends.
type EpochEndOffset struct {
	Epoch     int32
	EndOffset int64
}

// LeaderAndEpoch names a partition leader and its epoch.
type LeaderAndEpoch struct {
	LeaderID    int32
	LeaderEpoch int32
}

// EncodeFetchResponse encodes r, the answer to the request with
// correlationID, as a complete response frame: the size prefix, response
// header (v1 from version 12, else v0) and body. The returned chunks are
// the encoder's own bytes interleaved with r's record chunks (empty ones
// dropped); Done is left for the caller.
func EncodeFetchResponse(correlationID int32, r *FetchResponse) (*Response, error) {
	v := r.Version
	if v < FetchMinVersion || v > FetchMaxVersion {
		return nil, fmt.Errorf("%w: %d", ErrFetchVersion, v)
	}
	flexible := v >= 12
	metaSize, nChunks, err := fetchLayout(r)
	if err != nil {
		return nil, err
	}
	e := fetchEncoder{
		buf:      make([]byte, 0, metaSize),
		chunks:   make([]Chunk, 0, nChunks),
		flexible: flexible,
	}
	var total int64
	e.int32(0) // size, written last
	e.int32(correlationID)
	if flexible {
		e.uvarint(0) // response header v1: no tagged fields
	}
	e.int32(r.ThrottleMillis)
	if v >= 7 {
		e.int16(r.ErrorCode)
		e.int32(r.SessionID)
	}
	e.arrayLen(len(r.Topics))
	for ti := range r.Topics {
		t := &r.Topics[ti]
		if v >= 13 {
			e.buf = append(e.buf, t.ID[:]...)
		} else {
			e.string(t.Name)
		}
		e.arrayLen(len(t.Partitions))
		for pi := range t.Partitions {
			p := &t.Partitions[pi]
			e.int32(p.Partition)
			e.int16(p.ErrorCode)
			e.int64(p.HighWatermark)
			e.int64(p.LastStableOffset)
			if v >= 5 {
				e.int64(p.LogStartOffset)
			}
			if p.AbortedTransactions == nil {
				e.nullArray()
			} else {
				e.arrayLen(len(p.AbortedTransactions))
				for _, a := range p.AbortedTransactions {
					e.int64(a.ProducerID)
					e.int64(a.FirstOffset)
					if flexible {
						e.uvarint(0)
					}
				}
			}
			if v >= 11 {
				e.int32(p.PreferredReadReplica)
			}
			n := recordsLen(p.Records)
			if flexible {
				e.uvarint(uint64(n) + 1)
			} else {
				e.int32(int32(n))
			}
			e.records(p.Records)
			total += n
			if flexible {
				e.partitionTags(p)
			}
		}
		if flexible {
			e.uvarint(0)
		}
	}
	if flexible {
		e.responseTags(r)
	}
	e.flush()
	total += int64(len(e.buf))
	if total-4 > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d-byte frame", ErrFetchTooLarge, total-4)
	}
	binary.BigEndian.PutUint32(e.buf, uint32(total-4))
	// The buffer no longer grows: resolve the chunks that point into it.
	for i := range e.chunks {
		c := &e.chunks[i]
		if c.File == nil && c.Bytes == nil {
			c.Bytes = e.buf[c.Position : c.Position+c.Length : c.Position+c.Length]
			c.Position, c.Length = 0, 0
		}
	}
	return &Response{Chunks: e.chunks}, nil
}

// fetchLayout checks r and returns an upper bound of the encoder's own
// bytes (so its buffer is allocated once) and the number of chunks.
func fetchLayout(r *FetchResponse) (metaSize, nChunks int, err error) {
	metaSize = 4 + 4 + 1 + 4 + 2 + 4 + 5 + 1
	nChunks = 1
	if r.Version >= 16 && len(r.NodeEndpoints) > 0 {
		metaSize += 1 + 5 + 5
		for _, n := range r.NodeEndpoints {
			if len(n.Host) > math.MaxInt16 || n.Rack != nil && len(*n.Rack) > math.MaxInt16 {
				return 0, 0, ErrFetchEndpoint
			}
			metaSize += 4 + 5 + len(n.Host) + 4 + 5 + 1
			if n.Rack != nil {
				metaSize += len(*n.Rack)
			}
		}
	}
	for ti := range r.Topics {
		t := &r.Topics[ti]
		if len(t.Name) > math.MaxInt16 {
			return 0, 0, ErrFetchTopic
		}
		metaSize += 5 + len(t.Name) + 16 + 5 + 1
		for pi := range t.Partitions {
			p := &t.Partitions[pi]
			metaSize += 4 + 2 + 8 + 8 + 8 + 5 + 17*len(p.AbortedTransactions) + 4 + 5 + 1 + 2*16 + 5
			var n int64
			for ci := range p.Records {
				c := &p.Records[ci]
				if c.File != nil && (c.Position < 0 || c.Length < 0) {
					return 0, 0, fmt.Errorf("%w: position %d, length %d", ErrFetchChunk, c.Position, c.Length)
				}
				if l := c.Len(); l > 0 {
					n += l
					nChunks++
				}
			}
			if n > math.MaxInt32-1 {
				return 0, 0, fmt.Errorf("%w: partition %d has %d bytes of records", ErrFetchTooLarge, p.Partition, n)
			}
			if n > 0 {
				nChunks++ // the encoder's bytes after the records
			}
		}
	}
	return metaSize, nChunks, nil
}

func recordsLen(cs []Chunk) int64 {
	var n int64
	for i := range cs {
		n += cs[i].Len()
	}
	return n
}

// fetchEncoder appends the encoder's own bytes to buf; chunks collects the
// output, where a chunk with neither File nor Bytes stands for
// buf[Position:Position+Length] until the end, when buf is complete and
// its slices can be taken (records chunks are never empty, so the marker
// is unambiguous).
type fetchEncoder struct {
	buf      []byte
	chunks   []Chunk
	flushed  int // buf[:flushed] is already covered by chunks
	flexible bool
}

func (e *fetchEncoder) flush() {
	if len(e.buf) > e.flushed {
		e.chunks = append(e.chunks, Chunk{Position: int64(e.flushed), Length: int64(len(e.buf) - e.flushed)})
		e.flushed = len(e.buf)
	}
}

func (e *fetchEncoder) records(cs []Chunk) {
	for i := range cs {
		if cs[i].Len() <= 0 {
			continue
		}
		e.flush()
		e.chunks = append(e.chunks, cs[i])
	}
}

func (e *fetchEncoder) int16(v int16) { e.buf = binary.BigEndian.AppendUint16(e.buf, uint16(v)) }
func (e *fetchEncoder) int32(v int32) { e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(v)) }
func (e *fetchEncoder) int64(v int64) { e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(v)) }
func (e *fetchEncoder) uvarint(v uint64) {
	e.buf = binary.AppendUvarint(e.buf, v)
}

func (e *fetchEncoder) arrayLen(n int) {
	if e.flexible {
		e.uvarint(uint64(n) + 1)
	} else {
		e.int32(int32(n))
	}
}

func (e *fetchEncoder) nullArray() {
	if e.flexible {
		e.uvarint(0)
	} else {
		e.int32(-1)
	}
}

func (e *fetchEncoder) string(s string) {
	if e.flexible {
		e.uvarint(uint64(len(s)) + 1)
	} else {
		e.int16(int16(len(s)))
	}
	e.buf = append(e.buf, s...)
}

// partitionTags writes a partition's tagged fields: DivergingEpoch (tag 0)
// and CurrentLeader (tag 1), each a struct with its own empty tag section,
// then samsa's FetchDurableHonouredTag (the highest, so last: tags go in
// increasing order).
func (e *fetchEncoder) partitionTags(p *FetchPartition) {
	n := 0
	if p.DivergingEpoch != nil {
		n++
	}
	if p.CurrentLeader != nil {
		n++
	}
	if p.DurableHonoured {
		n++
	}
	e.uvarint(uint64(n))
	if d := p.DivergingEpoch; d != nil {
		e.uvarint(0)
		e.uvarint(4 + 8 + 1)
		e.int32(d.Epoch)
		e.int64(d.EndOffset)
		e.uvarint(0)
	}
	if l := p.CurrentLeader; l != nil {
		e.uvarint(1)
		e.uvarint(4 + 4 + 1)
		e.int32(l.LeaderID)
		e.int32(l.LeaderEpoch)
		e.uvarint(0)
	}
	if p.DurableHonoured {
		e.uvarint(FetchDurableHonouredTag)
		e.uvarint(1)
		e.buf = append(e.buf, FetchDurableScheme)
	}
}

// responseTags writes the response's top-level tagged fields:
// NodeEndpoints (tag 0, v16+), a compact array of structs each with its
// own empty tag section. The tag's size prefix is the array's encoded
// length, so it is written into a scratch tail first.
func (e *fetchEncoder) responseTags(r *FetchResponse) {
	if r.Version < 16 || len(r.NodeEndpoints) == 0 {
		e.uvarint(0)
		return
	}
	e.uvarint(1)
	e.uvarint(0)
	at := len(e.buf)
	e.uvarint(uint64(len(r.NodeEndpoints)) + 1)
	for _, n := range r.NodeEndpoints {
		e.int32(n.NodeID)
		e.string(n.Host)
		e.int32(n.Port)
		if n.Rack == nil {
			e.uvarint(0)
		} else {
			e.string(*n.Rack)
		}
		e.uvarint(0)
	}
	field := append([]byte(nil), e.buf[at:]...)
	e.buf = binary.AppendUvarint(e.buf[:at], uint64(len(field)))
	e.buf = append(e.buf, field...)
}
