package catalog

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/samsa-io/samsa/wire/kerr"
)

// fakeController answers each AllocateProducerIds with what the test
// sends on give.
type fakeController struct {
	asked chan struct{}
	give  chan fakeBlock
}

type fakeBlock struct {
	start int64
	n     int32
	err   error
}

func newFakeController() *fakeController {
	return &fakeController{asked: make(chan struct{}, 8), give: make(chan fakeBlock)}
}

func (f *fakeController) fetch(ctx context.Context) (int64, int32, error) {
	f.asked <- struct{}{}
	select {
	case b := <-f.give:
		return b.start, b.n, b.err
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
}

type pidResult struct {
	id   int64
	code kerr.Code
}

func takeID(p *clusterProducerIDs) <-chan pidResult {
	out := make(chan pidResult, 1)
	p.take(func(id int64, code kerr.Code) { out <- pidResult{id, code} })
	return out
}

func newTestPIDs(t *testing.T, f *fakeController) *clusterProducerIDs {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	p := newClusterProducerIDs(f.fetch, slog.New(slog.DiscardHandler), stop)
	p.retry = backoff{min: time.Millisecond, max: time.Millisecond}
	return p
}

// The first InitProducerId waits for a block; the next block is asked
// for once 90% of the current one is used and is there before the
// current one runs out, so later requests do not wait.
func TestClusterProducerIDsPrefetch(t *testing.T) {
	f := newFakeController()
	p := newTestPIDs(t, f)
	first := takeID(p)
	<-f.asked
	select {
	case r := <-first:
		t.Fatalf("answered before a block: %+v", r)
	default:
	}
	f.give <- fakeBlock{start: 0, n: 10}
	if r := <-first; r != (pidResult{0, kerr.None}) {
		t.Fatalf("first: %+v", r)
	}
	for want := int64(1); want <= 8; want++ {
		if r := <-takeID(p); r != (pidResult{want, kerr.None}) {
			t.Fatalf("id %d: %+v", want, r)
		}
	}
	// Id 8 was the ninth of ten: the next block is being asked for.
	<-f.asked
	f.give <- fakeBlock{start: 1000, n: 10}
	if r := <-takeID(p); r != (pidResult{9, kerr.None}) {
		t.Fatalf("last of the first block: %+v", r)
	}
	// The second block is ahead, or (if id 9 went before it was in)
	// the request waits for it: either way it is next.
	if r := <-takeID(p); r != (pidResult{1000, kerr.None}) {
		t.Fatalf("first of the second block: %+v", r)
	}
}

// Errors (NOT_CONTROLLER, lost connections) are retried; a request that
// no block reaches in time is answered COORDINATOR_LOAD_IN_PROGRESS,
// which clients retry.
func TestClusterProducerIDsRetry(t *testing.T) {
	f := newFakeController()
	p := newTestPIDs(t, f)
	got := takeID(p)
	<-f.asked
	f.give <- fakeBlock{err: kerr.NotController}
	<-f.asked
	f.give <- fakeBlock{err: errors.New("connection refused")}
	<-f.asked
	f.give <- fakeBlock{start: 5000, n: 1000}
	if r := <-got; r != (pidResult{5000, kerr.None}) {
		t.Fatalf("after retries: %+v", r)
	}

	f2 := newFakeController()
	p2 := newTestPIDs(t, f2)
	p2.wait = time.Millisecond
	if r := <-takeID(p2); r.code != kerr.CoordinatorLoadInProgress {
		t.Fatalf("no block: %+v", r)
	}
}
