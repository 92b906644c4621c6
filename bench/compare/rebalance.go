package compare

import (
	"context"
	"fmt"
	"strings"

	"github.com/samsa-io/samsa/bench"
)

// The group rebalance workloads (G1, G2): how long a consumer group of 10,
// 50 and 100 franz-go members (one process) takes to form on a topic of
// RebalancePartitions partitions, and to be stable again after one member
// joins and after one leaves (median of RebalanceRepetitions), once with
// the classic protocol (cooperative-sticky, client-side assignment) and
// once with KIP-848's consumer protocol (kgo.ServerSideBalancer). Both
// brokers keep their default heartbeat intervals (franz-go's 3 s for
// classic members; group.consumer.heartbeat.interval.ms 5 s, told by the
// broker, for consumer members), which bound how soon a member hears of a
// rebalance: the figures are what an application sees, not the
// coordinator's CPU time alone.

// RebalanceMembers are the group sizes measured.
var RebalanceMembers = []int{10, 50, 100}

// RebalancePartitions is the topic's partition count: at least two per
// member at the largest size.
const RebalancePartitions = 200

// RebalanceRepetitions is how many join+leave cycles each size gets.
const RebalanceRepetitions = 3

// RebalanceWorkloads returns G1 (classic) and G2 (consumer protocol).
func RebalanceWorkloads() []Workload {
	protocols := []struct{ name, protocol, how string }{
		{"G1 group rebalance, classic protocol", bench.ProtocolClassic, "kgo.CooperativeStickyBalancer"},
		{"G2 group rebalance, consumer protocol (KIP-848)", bench.ProtocolConsumer, "kgo.ServerSideBalancer with the sticky (uniform) assignor"},
	}
	var list []Workload
	for _, p := range protocols {
		name, protocol := p.name, p.protocol
		sizes := make([]string, len(RebalanceMembers))
		for i, n := range RebalanceMembers {
			sizes[i] = fmt.Sprint(n)
		}
		list = append(list, Workload{Name: name,
			Command: fmt.Sprintf("samsa bench group-rebalance --protocol %s --members %s --partitions %d --repetitions %d (%s; one new group and topic per size)",
				protocol, strings.Join(sizes, "|"), RebalancePartitions, RebalanceRepetitions, p.how),
			Run: func(ctx context.Context, b *Running) ([]Figure, error) {
				var figs []Figure
				before, _ := b.Usage()
				for _, n := range RebalanceMembers {
					res, err := bench.RunRebalance(ctx, bench.RebalanceWorkload{Brokers: []string{b.Addr}, TLS: b.Config.TLS,
						Topic: fmt.Sprintf("g-rebalance-%s-%d", protocol, n), Partitions: RebalancePartitions,
						Members: n, Protocol: protocol, Repetitions: RebalanceRepetitions})
					if err != nil {
						return nil, fmt.Errorf("%d members: %w", n, err)
					}
					figs = append(figs,
						Figure{name, fmt.Sprintf("%d members: form", n), "ms", ms(res.Form), true},
						Figure{name, fmt.Sprintf("%d members: one joins (median)", n), "ms", ms(res.JoinMedian()), true},
						Figure{name, fmt.Sprintf("%d members: one leaves (median)", n), "ms", ms(res.LeaveMedian()), true})
				}
				after, _ := b.Usage()
				return append(figs, Figure{name, "broker CPU", "CPU-s", after.CPUSeconds - before.CPUSeconds, true}), nil
			}})
	}
	return list
}
