package testkit

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// readBackIdle is how long ReadBackExactlyOnce polls without a record
// before it gives up on the rest.
const readBackIdle = 15 * time.Second

// ReadBackExactlyOnce polls cl (a consumer from the start of the
// produced topics) until every value of acked was seen, nothing new has
// come for 15 s, or ctx ends, and fails t unless each acknowledged value
// was read exactly once: the check after an idempotent acks=all
// producer rode through broker failures.
func ReadBackExactlyOnce(t testing.TB, ctx context.Context, cl *kgo.Client, acked []string) {
	t.Helper()
	if len(acked) == 0 {
		t.Error("nothing was acknowledged: the test proved nothing")
		return
	}
	want := make(map[string]bool, len(acked))
	for _, v := range acked {
		want[v] = true
	}
	seen := make(map[string]int, len(acked))
	found := 0
	idle := time.Now()
	for found < len(want) && time.Since(idle) < readBackIdle && ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			idle = time.Now()
			v := string(r.Value)
			seen[v]++
			if want[v] && seen[v] == 1 {
				found++
			}
		})
	}
	var lost, dup []string
	for v := range want {
		switch seen[v] {
		case 0:
			lost = append(lost, v)
		case 1:
		default:
			dup = append(dup, v)
		}
	}
	slices.Sort(lost)
	slices.Sort(dup)
	if len(lost) > 0 {
		t.Errorf("%d of %d acknowledged records lost, first %v", len(lost), len(want), lost[:min(5, len(lost))])
	}
	if len(dup) > 0 {
		t.Errorf("%d acknowledged records read more than once (the producer is idempotent), first %v", len(dup), dup[:min(5, len(dup))])
	}
}
