package segment

import (
	"crypto/md5"
	"encoding/binary"
)

// offsetMap is the cleaner's map from a record key to the offset of its
// latest record, in a fixed memory budget, as Kafka's SkimpyOffsetMap:
// an open-addressing table of 24-byte slots, the key's MD5 (16 bytes,
// so that two keys colliding is negligible and never needs the key
// itself) and the offset (8 bytes). It is filled to at most loadFactor of
// its slots; full reports when the next key may not fit, and the cleaner
// then cleans only up to the offsets it has mapped.
//
// The table is one byte slice (what log.cleaner.dedupe.buffer.size
// budgets), no Go map, so its memory is what the budget says.
type offsetMap struct {
	slots    []byte
	n        int // slots
	used     int
	maxUsed  int
	latest   int64 // largest offset put, -1 if none
	probeLen int64 // lookups' probes, for the stats
}

const offsetMapSlot = md5.Size + 8

// newOffsetMap makes a map in bytes of memory (at least 16 slots).
func newOffsetMap(bytes int64, loadFactor float64) *offsetMap {
	n := prevPrime(max(int(bytes/offsetMapSlot), 17))
	if loadFactor <= 0 || loadFactor > 1 {
		loadFactor = 0.9
	}
	// At least one slot stays free, so a lookup of an absent key ends.
	m := &offsetMap{slots: make([]byte, n*offsetMapSlot), n: n, maxUsed: min(max(int(float64(n)*loadFactor), 1), n-1)}
	m.reset()
	return m
}

// emptyOffset marks a free slot: a real offset is never negative.
const emptyOffset = -1

func (m *offsetMap) reset() {
	for i := 0; i < m.n; i++ {
		binary.BigEndian.PutUint64(m.slots[i*offsetMapSlot+md5.Size:], uint64(1<<64-1))
	}
	m.used, m.latest = 0, -1
}

// full reports whether the map holds as many keys as it may.
func (m *offsetMap) full() bool { return m.used >= m.maxUsed }

// slotFor returns the slot index holding h, or the free slot where it
// belongs.
func (m *offsetMap) slotFor(h *[md5.Size]byte) (int, bool) {
	// Double hashing over a prime number of slots: every step size
	// visits every slot, and a lookup of an absent key at a 0.9 load takes
	// about 10 probes where linear probing would take about 50.
	n := uint64(m.n)
	i := binary.BigEndian.Uint64(h[:8]) % n
	step := 1 + binary.BigEndian.Uint64(h[8:])%(n-1)
	for {
		m.probeLen++
		s := m.slots[i*offsetMapSlot : (i+1)*offsetMapSlot]
		if int64(binary.BigEndian.Uint64(s[md5.Size:])) == emptyOffset {
			return int(i), false
		}
		if [md5.Size]byte(s[:md5.Size]) == *h {
			return int(i), true
		}
		if i += step; i >= n {
			i -= n
		}
	}
}

// put maps key to offset (offsets arrive in increasing order, so the
// latest wins). It reports false, changing nothing, when the key is new
// and the map is full.
func (m *offsetMap) put(key []byte, offset int64) bool {
	h := md5.Sum(key)
	i, found := m.slotFor(&h)
	if !found {
		if m.full() {
			return false
		}
		m.used++
		copy(m.slots[i*offsetMapSlot:], h[:])
	}
	binary.BigEndian.PutUint64(m.slots[i*offsetMapSlot+md5.Size:], uint64(offset))
	m.latest = max(m.latest, offset)
	return true
}

// get returns the latest offset of key, or -1.
func (m *offsetMap) get(key []byte) int64 {
	h := md5.Sum(key)
	i, found := m.slotFor(&h)
	if !found {
		return -1
	}
	return int64(binary.BigEndian.Uint64(m.slots[i*offsetMapSlot+md5.Size:]))
}

// prevPrime is the largest prime <= n (n >= 2).
func prevPrime(n int) int {
	for ; n > 2; n-- {
		prime := n%2 != 0
		for d := 3; prime && d*d <= n; d += 2 {
			prime = n%d != 0
		}
		if prime {
			return n
		}
	}
	return 2
}
