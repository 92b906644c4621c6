package actors

import "github.com/samsa-io/samsa/wire/batchtest"

// plainBatch is batchtest.Plain's arguments, built on build. It only keeps
// plain(n, ts).build() compiling in housekeeping_test.go, which another
// change is editing (its sleeps); new tests call batchtest.Plain, and the
// next change to housekeeping_test.go should too and delete this.
type plainBatch struct {
	n  int
	ts int64
}

func plain(n int, ts int64) plainBatch { return plainBatch{n, ts} }

func (p plainBatch) build() []byte { return batchtest.Plain(p.n, p.ts) }
