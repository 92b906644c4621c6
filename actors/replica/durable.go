package replica

import (
	"time"
)

// Durable replication: what a follower holds and what it has made
// durable are two positions. Each fetch carries both, the fetch offset
// (its log end: where the leader reads from) and, in samsa's tagged field
// (wire.FetchDurableEndTag), its durable end; a samsa leader counts the
// durable end for the high watermark and says so in its answer
// (wire.FetchDurableHonouredTag). The fetcher runs ahead of the fsync
// only against a leader whose last answer for the partition said so:
//
//   - honoured: the next fetch goes out as soon as the data is appended,
//     while its fsync runs (the fsync of the previous answer's data must
//     be done by then, so a follower whose disk hangs stops fetching and
//     leaves the ISR rather than holding acks=all forever);
//   - not honoured (a Kafka leader, a samsa leader without the scheme,
//     or the first fetch after the position was (re)read): the next
//     fetch waits until the log end is durable, so its fetch offset is
//     its durable end and no leader counts what a power cut could take.
//
// A fetch sent while something is not durable yet asks the leader not to
// wait (max wait 0): parked there, it could not report the fsync that
// completes meanwhile, and an acks=all producer would wait out the max
// wait. If it brings nothing, the next fetch waits for the fsync (settle)
// and then may park as usual: no spinning, and a lone record is
// acknowledged after one fsync and two short round trips.

// durableReport is the callback that tells the fetcher p's durable end
// moved, for the position generation gen; reports of an older one (the
// position was read again: a truncation, an error) are dropped.
func (f *fetcher) durableReport(p *followedPart, gen uint64) func(end int64, err error) {
	return func(end int64, err error) {
		f.mu.Lock()
		if p.pos.gen == gen {
			if err != nil {
				p.pos.durErr = err
			} else if end > p.pos.durable {
				p.pos.durable = end
			}
		}
		f.mu.Unlock()
		select {
		case f.durableCh <- struct{}{}:
		default:
		}
	}
}

func (f *fetcher) durableOf(p *followedPart) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return p.pos.durable
}

// ahead reports whether a fetch for parts goes ahead of an fsync.
func (f *fetcher) ahead(parts []*followedPart) bool {
	for _, p := range parts {
		if f.durableOf(p) < p.pos.offset {
			return true
		}
	}
	return false
}

// gate waits until each of parts may be fetched for (what must be
// durable by then is) and returns those that may; one that has not got
// there within the actor timeout sits this fetch out, one whose fsync
// failed has its position read again.
func (f *fetcher) gate(parts []*followedPart) []*followedPart {
	settle := f.settle
	f.settle = false
	deadline := time.Now().Add(f.fs.cfg.ActorTimeout)
	kept := parts[:0]
	for _, p := range parts {
		need := p.pos.offset
		if p.pos.honoured && !settle && p.pos.sent >= 0 {
			need = min(need, p.pos.sent)
		}
		if f.waitDurable(p, need, deadline) {
			kept = append(kept, p)
		}
	}
	return kept
}

// waitDurable waits until p is durable up to need, or deadline.
func (f *fetcher) waitDurable(p *followedPart, need int64, deadline time.Time) bool {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		f.mu.Lock()
		durable, err := p.pos.durable, p.pos.durErr
		f.mu.Unlock()
		switch {
		case durable >= need:
			return true
		case err != nil:
			f.log().warn("the follower could not make what it fetched durable; reading its position again",
				"topic", p.Topic, "partition", p.Partition, "err", err)
			p.pos.known = false
			return false
		}
		if timer == nil {
			timer = time.NewTimer(time.Until(deadline))
		}
		select {
		case <-f.durableCh:
		case <-timer.C:
			f.log().warn("the follower's fsync is late; the partition sits this fetch out",
				"topic", p.Topic, "partition", p.Partition, "durable", durable, "needed", need)
			return false
		case <-f.quit:
			return false
		}
	}
}
