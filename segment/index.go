package segment

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// Index entry sizes. These constants are part of the on-disk format.
const (
	offsetEntrySize = 8  // relativeOffset int32, position int32
	timeEntrySize   = 12 // timestamp int64, relativeOffset int32
)

// offsetEntry maps the last offset of a batch (relative to the segment's
// base offset) to the batch's byte position in the .log file.
type offsetEntry struct {
	rel uint32
	pos uint32
}

// timeEntry says: every record with a timestamp greater than ts sits at an
// offset after base+rel.
type timeEntry struct {
	ts  int64
	rel uint32
}

// offsetIndex is a segment's sparse offset index, kept in memory.
type offsetIndex []offsetEntry

// floorIndex returns the index of the last entry whose offset is <= rel,
// or -1 when every entry is larger (scan from the segment's start).
// Scanning the log from there finds rel.
func (x offsetIndex) floorIndex(rel uint32) int {
	return sort.Search(len(x), func(i int) bool { return x[i].rel > rel }) - 1
}

// floorPosIndex returns the index of the last entry whose position is
// <= pos, or -1.
func (x offsetIndex) floorPosIndex(pos int64) int {
	return sort.Search(len(x), func(i int) bool { return int64(x[i].pos) > pos }) - 1
}

// truncate drops entries for batches at or after byte position pos.
func (x offsetIndex) truncate(pos int64) offsetIndex {
	i := sort.Search(len(x), func(i int) bool { return int64(x[i].pos) >= pos })
	return x[:i]
}

func (x offsetIndex) encode() []byte {
	out := make([]byte, len(x)*offsetEntrySize)
	for i, e := range x {
		binary.BigEndian.PutUint32(out[i*offsetEntrySize:], e.rel)
		binary.BigEndian.PutUint32(out[i*offsetEntrySize+4:], e.pos)
	}
	return out
}

// decodeOffsetIndex parses an .index file and checks that it is sane for
// a segment of logSize bytes whose offsets are below base+maxRel:
// entries strictly increasing in both offset and position, positions
// inside the log.
func decodeOffsetIndex(b []byte, logSize int64, maxRel int64) (offsetIndex, error) {
	if len(b)%offsetEntrySize != 0 {
		return nil, fmt.Errorf("offset index size %d is not a multiple of %d", len(b), offsetEntrySize)
	}
	x := make(offsetIndex, len(b)/offsetEntrySize)
	for i := range x {
		e := offsetEntry{
			rel: binary.BigEndian.Uint32(b[i*offsetEntrySize:]),
			pos: binary.BigEndian.Uint32(b[i*offsetEntrySize+4:]),
		}
		if int64(e.pos) >= logSize || int64(e.rel) >= maxRel {
			return nil, fmt.Errorf("offset index entry %d (%d, %d) outside the segment", i, e.rel, e.pos)
		}
		if i > 0 && (e.rel <= x[i-1].rel || e.pos <= x[i-1].pos) {
			return nil, fmt.Errorf("offset index entry %d (%d, %d) not increasing", i, e.rel, e.pos)
		}
		x[i] = e
	}
	return x, nil
}

// timeIndex is a segment's sparse time index, kept in memory.
type timeIndex []timeEntry

// floor returns the relative offset of the last entry with ts <= target,
// or ok=false when every entry is later.
func (x timeIndex) floor(target int64) (rel uint32, ok bool) {
	i := sort.Search(len(x), func(i int) bool { return x[i].ts > target })
	if i == 0 {
		return 0, false
	}
	return x[i-1].rel, true
}

// truncate drops entries pointing at relative offsets >= rel.
func (x timeIndex) truncate(rel uint32) timeIndex {
	i := sort.Search(len(x), func(i int) bool { return x[i].rel >= rel })
	return x[:i]
}

func (x timeIndex) encode() []byte {
	out := make([]byte, len(x)*timeEntrySize)
	for i, e := range x {
		binary.BigEndian.PutUint64(out[i*timeEntrySize:], uint64(e.ts))
		binary.BigEndian.PutUint32(out[i*timeEntrySize+8:], e.rel)
	}
	return out
}

func decodeTimeIndex(b []byte, maxRel int64) (timeIndex, error) {
	if len(b)%timeEntrySize != 0 {
		return nil, fmt.Errorf("time index size %d is not a multiple of %d", len(b), timeEntrySize)
	}
	x := make(timeIndex, len(b)/timeEntrySize)
	for i := range x {
		e := timeEntry{
			ts:  int64(binary.BigEndian.Uint64(b[i*timeEntrySize:])),
			rel: binary.BigEndian.Uint32(b[i*timeEntrySize+8:]),
		}
		if int64(e.rel) >= maxRel {
			return nil, fmt.Errorf("time index entry %d (%d, %d) outside the segment", i, e.ts, e.rel)
		}
		if i > 0 && (e.ts <= x[i-1].ts || e.rel < x[i-1].rel) {
			return nil, fmt.Errorf("time index entry %d (%d, %d) not increasing", i, e.ts, e.rel)
		}
		x[i] = e
	}
	return x, nil
}
