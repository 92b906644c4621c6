package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// GroupWorkload measures the group coordinator: how long Members clients
// starting at once take to form a Stable group (every member holding its
// assignment), and how many offset commits per second one group takes
// from CommitWorkers concurrent committers.
type GroupWorkload struct {
	Brokers       []string
	Topic         string // consumed by the members; created with Partitions partitions
	Partitions    int32
	Members       int
	Commits       int64 // offset commits in total (0: skip the commit phase)
	CommitWorkers int   // concurrent OffsetCommit requests in flight
}

// DefaultGroupWorkload: 10 members on 10 partitions, 20000 commits from 8
// workers.
func DefaultGroupWorkload() GroupWorkload {
	return GroupWorkload{Brokers: []string{"127.0.0.1:9092"}, Topic: "samsa-bench-group", Partitions: 10,
		Members: 10, Commits: 20000, CommitWorkers: 8}
}

// GroupResult is the outcome of RunGroup.
type GroupResult struct {
	Kind          string        `json:"kind"` // "group"
	Members       int           `json:"members"`
	JoinToStable  time.Duration `json:"join_to_stable_ns"` // all clients started -> every member assigned
	Commits       int64         `json:"commits"`
	CommitWorkers int           `json:"commit_workers"`
	CommitElapsed time.Duration `json:"commit_elapsed_ns"`
	CommitsPerS   float64       `json:"commits_per_s"`
	CommitLatency *Summary      `json:"commit_latency,omitempty"`
	Errors        int64         `json:"errors"`
	FirstError    string        `json:"first_error,omitempty"`
}

// RunGroup runs the join measurement, then the commit measurement. The
// broker should run with group.initial.rebalance.delay.ms=0, or the join
// figure includes that delay (Kafka's default is 3 s).
func RunGroup(ctx context.Context, w GroupWorkload) (GroupResult, error) {
	res := GroupResult{Kind: "group", Members: w.Members, CommitWorkers: w.CommitWorkers}
	if w.Members < 1 || w.CommitWorkers < 1 || w.Partitions < 1 {
		return res, errors.New("bench: members, commit workers and partitions must be at least 1")
	}
	if err := EnsureTopic(ctx, Workload{Brokers: w.Brokers, Topic: w.Topic, Partitions: w.Partitions}); err != nil {
		return res, fmt.Errorf("bench: topic %s: %w", w.Topic, err)
	}
	admCl, err := kgo.NewClient(kgo.SeedBrokers(w.Brokers...))
	if err != nil {
		return res, err
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	// The first group request of a broker may create __consumer_offsets:
	// do it before the clock starts.
	if _, err := adm.FetchOffsets(ctx, "samsa-bench-warmup"); err != nil {
		return res, fmt.Errorf("bench: warm-up: %w", err)
	}

	group := "samsa-bench-join-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	var assigned sync.WaitGroup
	assigned.Add(w.Members)
	once := make([]sync.Once, w.Members)
	clients := make([]*kgo.Client, 0, w.Members)
	defer func() {
		for _, cl := range clients {
			cl.Close()
		}
	}()
	start := time.Now()
	for i := range w.Members {
		cl, err := kgo.NewClient(kgo.SeedBrokers(w.Brokers...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(w.Topic),
			kgo.Balancers(kgo.RangeBalancer()), kgo.DisableAutoCommit(),
			kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) { once[i].Do(assigned.Done) }))
		if err != nil {
			return res, err
		}
		clients = append(clients, cl)
		// Polling drives the group join in franz-go.
		go func() {
			for {
				fs := cl.PollFetches(ctx)
				if fs.IsClientClosed() || ctx.Err() != nil {
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { assigned.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return res, ctx.Err()
	}
	// A member may have been assigned in an early generation; the group
	// is formed when the coordinator says Stable with every member
	// holding partitions.
	for {
		d, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return res, fmt.Errorf("bench: describe %s: %w", group, err)
		}
		if g := d[group]; g.State == "Stable" && len(g.Members) == w.Members && allAssigned(g, int(w.Partitions)) {
			break
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		time.Sleep(time.Millisecond)
	}
	res.JoinToStable = time.Since(start)
	if w.Commits <= 0 {
		return res, nil
	}

	// Commits: a group with no members (simple commits, generation -1),
	// each request one partition's offset, as consumers commit.
	commitGroup := group + "-commits"
	lat := NewLatency()
	var next, errs atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	began := time.Now()
	for range w.CommitWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > w.Commits || ctx.Err() != nil {
					return
				}
				var os kadm.Offsets
				os.Add(kadm.Offset{Topic: w.Topic, Partition: int32(i % int64(w.Partitions)), At: i, LeaderEpoch: -1})
				t0 := time.Now()
				resp, err := adm.CommitOffsets(ctx, commitGroup, os)
				lat.Record(time.Since(t0))
				if err == nil {
					err = resp.Error()
				}
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		}()
	}
	wg.Wait()
	res.CommitElapsed = time.Since(began)
	res.Commits = min(next.Load()-int64(w.CommitWorkers), w.Commits)
	if ctx.Err() == nil {
		res.Commits = w.Commits
	}
	res.CommitsPerS = float64(res.Commits) / res.CommitElapsed.Seconds()
	s := lat.Summary()
	res.CommitLatency = &s
	res.Errors = errs.Load()
	if e, ok := firstErr.Load().(string); ok {
		res.FirstError = e
	}
	return res, ctx.Err()
}

// allAssigned reports whether the members hold partitions partitions
// between them and each holds at least one (when there are enough).
func allAssigned(g kadm.DescribedGroup, partitions int) bool {
	held := 0
	for _, m := range g.Members {
		c, ok := m.Assigned.AsConsumer()
		if !ok {
			return false
		}
		n := 0
		for _, t := range c.Topics {
			n += len(t.Partitions)
		}
		if n == 0 && partitions >= len(g.Members) {
			return false
		}
		held += n
	}
	return held == partitions
}

// WriteJSON writes the result as one JSON object.
func (r *GroupResult) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the result as a human-readable table.
func (r *GroupResult) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "group\t\n")
	fmt.Fprintf(tw, "join\t%d members Stable and assigned in %s\n", r.Members, r.JoinToStable.Round(time.Millisecond))
	if r.Commits > 0 {
		fmt.Fprintf(tw, "commits\t%d in %s from %d workers: %.0f commits/s\n", r.Commits,
			r.CommitElapsed.Round(time.Millisecond), r.CommitWorkers, r.CommitsPerS)
		if s := r.CommitLatency; s != nil {
			fmt.Fprintf(tw, "commit latency\tp50 %.2f ms, p99 %.2f ms, max %.2f ms\n", s.P50, s.P99, s.Max)
		}
	}
	if r.Errors > 0 {
		fmt.Fprintf(tw, "errors\t%d (first: %s)\n", r.Errors, r.FirstError)
	}
	return tw.Flush()
}
