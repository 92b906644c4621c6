package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Group protocols a RebalanceWorkload can run.
const (
	// ProtocolClassic is the JoinGroup/SyncGroup protocol with franz-go's
	// cooperative-sticky balancer (client-side assignment).
	ProtocolClassic = "classic"
	// ProtocolConsumer is KIP-848's ConsumerGroupHeartbeat protocol
	// (group.protocol=consumer; the broker assigns), franz-go's
	// kgo.ServerSideBalancer.
	ProtocolConsumer = "consumer"
)

// RebalanceWorkload measures how fast a consumer group settles: Members
// franz-go consumers (one process) start at once on a topic of Partitions
// partitions, then Repetitions times one member joins and, once the group
// is stable again, leaves.
type RebalanceWorkload struct {
	Brokers     []string
	TLS         *tls.Config
	Topic       string
	Partitions  int32
	Members     int
	Protocol    string // ProtocolClassic or ProtocolConsumer
	Repetitions int    // join+leave cycles after the group formed (0: only the formation)
}

// DefaultRebalanceWorkload: 10 classic members on 200 partitions, 3
// join/leave cycles.
func DefaultRebalanceWorkload() RebalanceWorkload {
	return RebalanceWorkload{Brokers: []string{"127.0.0.1:9092"}, Topic: "samsa-bench-rebalance", Partitions: 200,
		Members: 10, Protocol: ProtocolClassic, Repetitions: 3}
}

// RebalanceResult is the outcome of RunRebalance.
type RebalanceResult struct {
	Kind       string `json:"kind"` // "rebalance"
	Protocol   string `json:"protocol"`
	Members    int    `json:"members"`
	Partitions int32  `json:"partitions"`
	// Form: all clients started -> every partition owned by exactly one
	// member, a record fetched from every partition, and the broker
	// reporting the group Stable with every member.
	Form time.Duration `json:"form_ns"`
	// Joins and Leaves: one member started (closed) -> stable again, as
	// Form but without the fetch condition; one per repetition.
	Joins  []time.Duration `json:"joins_ns"`
	Leaves []time.Duration `json:"leaves_ns"`
}

// JoinMedian is the median of Joins (0 when there were none).
func (r *RebalanceResult) JoinMedian() time.Duration { return median(r.Joins) }

// LeaveMedian is the median of Leaves (0 when there were none).
func (r *RebalanceResult) LeaveMedian() time.Duration { return median(r.Leaves) }

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// RunRebalance creates the topic, puts one record in every partition,
// then times the formation and each join and leave. Stable means both
// views agree: the members' own assignment callbacks cover every
// partition exactly once (each member holding at least one when there
// are enough), and the coordinator describes the group as Stable with
// exactly the live members. The broker should run with
// group.initial.rebalance.delay.ms=0 (classic groups otherwise wait 3 s
// for more members).
func RunRebalance(ctx context.Context, w RebalanceWorkload) (RebalanceResult, error) {
	res := RebalanceResult{Kind: "rebalance", Protocol: w.Protocol, Members: w.Members, Partitions: w.Partitions}
	if w.Members < 1 || w.Partitions < 1 || w.Repetitions < 0 {
		return res, errors.New("bench: members and partitions must be at least 1, repetitions at least 0")
	}
	if w.Protocol != ProtocolClassic && w.Protocol != ProtocolConsumer {
		return res, fmt.Errorf("bench: protocol %q: want %s or %s", w.Protocol, ProtocolClassic, ProtocolConsumer)
	}
	base := Workload{Brokers: w.Brokers, TLS: w.TLS, Topic: w.Topic, Partitions: w.Partitions}
	if err := EnsureTopic(ctx, base); err != nil {
		return res, fmt.Errorf("bench: topic %s: %w", w.Topic, err)
	}
	admCl, err := base.newClient(kgo.SeedBrokers(w.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return res, err
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	// A topic left by an earlier run keeps its partition count: measure
	// that one.
	if w.Partitions, err = topicPartitions(ctx, adm, w.Topic); err != nil {
		return res, err
	}
	res.Partitions = w.Partitions
	recs := make([]*kgo.Record, 0, w.Partitions)
	for p := range w.Partitions {
		recs = append(recs, &kgo.Record{Topic: w.Topic, Partition: p, Value: []byte("rebalance")})
	}
	if err := admCl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return res, fmt.Errorf("bench: filling %s: %w", w.Topic, err)
	}
	if err := warmUpCoordinator(ctx, adm); err != nil {
		return res, err
	}

	g := &rebalanceGroup{w: w, base: base, adm: adm, name: "samsa-bench-rebalance-" + w.Protocol + "-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		changed: make(chan struct{}, 1), consumed: map[int32]bool{}}
	defer g.closeAll()

	start := time.Now()
	for range w.Members {
		if err := g.add(ctx); err != nil {
			return res, err
		}
	}
	if err := g.waitStable(ctx, true); err != nil {
		return res, fmt.Errorf("bench: forming %d members: %w", w.Members, err)
	}
	res.Form = time.Since(start)
	for range w.Repetitions {
		t0 := time.Now()
		if err := g.add(ctx); err != nil {
			return res, err
		}
		if err := g.waitStable(ctx, false); err != nil {
			return res, fmt.Errorf("bench: after a join: %w", err)
		}
		res.Joins = append(res.Joins, time.Since(t0))
		t0 = time.Now()
		g.removeLast()
		if err := g.waitStable(ctx, false); err != nil {
			return res, fmt.Errorf("bench: after a leave: %w", err)
		}
		res.Leaves = append(res.Leaves, time.Since(t0))
	}
	return res, nil
}

// topicPartitions is topic's partition count once the broker's metadata
// shows the topic (Kafka's brokers learn a created topic asynchronously).
func topicPartitions(ctx context.Context, adm *kadm.Client, topic string) (int32, error) {
	retry := time.NewTicker(50 * time.Millisecond)
	defer retry.Stop()
	deadline := time.After(30 * time.Second)
	for {
		details, err := adm.ListTopics(ctx, topic)
		if err == nil {
			err = details.Error()
		}
		if n := len(details[topic].Partitions); err == nil && n > 0 {
			return int32(n), nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-deadline:
			return 0, fmt.Errorf("bench: topic %s: no partitions in metadata: %v", topic, err)
		case <-retry.C:
		}
	}
}

// warmUpCoordinator asks for a group's offsets until the answer is not
// an error: the first group request of a broker creates
// __consumer_offsets, and Kafka answers COORDINATOR_NOT_AVAILABLE until
// it is loaded. That happens before the clock starts.
func warmUpCoordinator(ctx context.Context, adm *kadm.Client) error {
	retry := time.NewTicker(100 * time.Millisecond)
	defer retry.Stop()
	deadline := time.After(time.Minute)
	for {
		resp, err := adm.FetchOffsets(ctx, "samsa-bench-warmup")
		if err == nil {
			err = resp.Error()
		}
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("bench: warm-up: %w", err)
		case <-retry.C:
		}
	}
}

// rebalanceGroup is the members of one run and what their callbacks and
// fetches have told.
type rebalanceGroup struct {
	w       RebalanceWorkload
	base    Workload
	adm     *kadm.Client
	name    string
	changed chan struct{} // a callback or fetch changed something

	mu       sync.Mutex
	members  []*rebalanceMember
	consumed map[int32]bool // partitions a record was fetched from
}

type rebalanceMember struct {
	cl    *kgo.Client
	done  chan struct{} // the poll loop returned
	owned map[int32]bool
}

func (g *rebalanceGroup) signal() {
	select {
	case g.changed <- struct{}{}:
	default:
	}
}

// add starts one member and its poll loop (polling drives franz-go's
// group membership).
func (g *rebalanceGroup) add(ctx context.Context) error {
	m := &rebalanceMember{done: make(chan struct{}), owned: map[int32]bool{}}
	track := func(add bool) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
			g.mu.Lock()
			for _, p := range ps[g.w.Topic] {
				if add {
					m.owned[p] = true
				} else {
					delete(m.owned, p)
				}
			}
			g.mu.Unlock()
			g.signal()
		}
	}
	opts := []kgo.Opt{kgo.SeedBrokers(g.w.Brokers...), kgo.ConsumerGroup(g.name), kgo.ConsumeTopics(g.w.Topic),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.OnPartitionsAssigned(track(true)), kgo.OnPartitionsRevoked(track(false)), kgo.OnPartitionsLost(track(false))}
	if g.w.Protocol == ProtocolConsumer {
		opts = append(opts, kgo.ServerSideBalancer(), kgo.Balancers(kgo.StickyBalancer()))
	} else {
		opts = append(opts, kgo.Balancers(kgo.CooperativeStickyBalancer()))
	}
	cl, err := g.base.newClient(opts...)
	if err != nil {
		return err
	}
	m.cl = cl
	g.mu.Lock()
	g.members = append(g.members, m)
	g.mu.Unlock()
	go func() {
		defer close(m.done)
		for {
			fs := cl.PollFetches(ctx)
			if fs.IsClientClosed() || ctx.Err() != nil {
				return
			}
			fresh := false
			g.mu.Lock()
			fs.EachPartition(func(p kgo.FetchTopicPartition) {
				if len(p.Records) > 0 && !g.consumed[p.Partition] {
					g.consumed[p.Partition], fresh = true, true
				}
			})
			g.mu.Unlock()
			if fresh {
				g.signal()
			}
		}
	}()
	return nil
}

// removeLast closes the newest member: it leaves the group.
func (g *rebalanceGroup) removeLast() {
	g.mu.Lock()
	m := g.members[len(g.members)-1]
	g.members = g.members[:len(g.members)-1]
	g.mu.Unlock()
	m.cl.Close()
	<-m.done
	g.signal()
}

func (g *rebalanceGroup) closeAll() {
	g.mu.Lock()
	ms := g.members
	g.members = nil
	g.mu.Unlock()
	for _, m := range ms {
		m.cl.Close()
	}
	for _, m := range ms {
		<-m.done
	}
}

// covered reports whether the live members' callbacks cover every
// partition exactly once, each member holding one at least when there
// are enough, and (fetched) a record was fetched from every partition.
func (g *rebalanceGroup) covered(fetched bool) (members int, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if fetched && len(g.consumed) != int(g.w.Partitions) {
		return len(g.members), false
	}
	held := 0
	seen := make(map[int32]bool, g.w.Partitions)
	for _, m := range g.members {
		if len(m.owned) == 0 && int(g.w.Partitions) >= len(g.members) {
			return len(g.members), false
		}
		for p := range m.owned {
			if seen[p] {
				return len(g.members), false
			}
			seen[p] = true
			held++
		}
	}
	return len(g.members), held == int(g.w.Partitions)
}

// waitStable waits until the members cover the topic (covered) and the
// coordinator agrees.
func (g *rebalanceGroup) waitStable(ctx context.Context, fetched bool) error {
	// The broker is asked only once the members are covered; a member's
	// callbacks are the events, the describe is polled.
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	for {
		if n, ok := g.covered(fetched); ok {
			stable, err := g.describeStable(ctx, n)
			if err != nil {
				return err
			}
			if stable {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-poll.C:
			}
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-g.changed:
		case <-poll.C:
		}
	}
}

// describeStable asks the coordinator whether the group is Stable with
// members members (DescribeGroups for a classic group,
// ConsumerGroupDescribe for a consumer group).
func (g *rebalanceGroup) describeStable(ctx context.Context, members int) (bool, error) {
	if g.w.Protocol == ProtocolConsumer {
		d, err := g.adm.DescribeConsumerGroups(ctx, g.name)
		if err != nil {
			return false, fmt.Errorf("describe %s: %w", g.name, err)
		}
		cg := d[g.name]
		return cg.Err == nil && cg.State == "Stable" && len(cg.Members) == members, nil
	}
	d, err := g.adm.DescribeGroups(ctx, g.name)
	if err != nil {
		return false, fmt.Errorf("describe %s: %w", g.name, err)
	}
	dg := d[g.name]
	return dg.Err == nil && dg.State == "Stable" && len(dg.Members) == members, nil
}

// WriteTable writes the result as a human-readable table.
func (r *RebalanceResult) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "group rebalance\t%s protocol, %d members, %d partitions\n", r.Protocol, r.Members, r.Partitions)
	fmt.Fprintf(tw, "form\t%s (all started -> every partition owned and fetched from, Stable)\n", r.Form.Round(time.Millisecond))
	if len(r.Joins) > 0 {
		fmt.Fprintf(tw, "one joins\tmedian %s of %d\n", r.JoinMedian().Round(time.Millisecond), len(r.Joins))
		fmt.Fprintf(tw, "one leaves\tmedian %s of %d\n", r.LeaveMedian().Round(time.Millisecond), len(r.Leaves))
	}
	return tw.Flush()
}
