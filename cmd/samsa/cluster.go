package main

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// clusterView is `samsa cluster`'s answer.
type clusterView struct {
	ClusterID       string             `json:"cluster_id"`
	Controller      int32              `json:"controller"`
	Brokers         []clusterBroker    `json:"brokers"`
	Topics          int                `json:"topics"`
	Partitions      int                `json:"partitions"`
	UnderReplicated []clusterPartition `json:"under_replicated"`
	Offline         []clusterPartition `json:"offline"`
}

type clusterBroker struct {
	ID   int32  `json:"id"`
	Host string `json:"host"`
	Port int32  `json:"port"`
	Rack string `json:"rack,omitempty"`
}

// clusterPartition is a partition that needs attention.
type clusterPartition struct {
	Topic string `json:"topic"`
	partitionView
}

func newClusterCommand() *cobra.Command {
	opts := &adminOptions{}
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Show the brokers, the controller and the partitions that are under-replicated or offline",
		Long: `Show the cluster id, its brokers, the active controller, how many topics and
partitions it has, and every partition whose ISR is smaller than its replica set
(under-replicated) or that has no leader (offline). Works against any
Kafka-compatible cluster. Output is a table, or JSON with --output json.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return opts.with(cmd, func(s *session) error {
				md, err := s.adm.Metadata(s.ctx)
				if err != nil {
					return opts.requestError("metadata", err)
				}
				return writeCluster(cmd.OutOrStdout(), s.format, viewCluster(md))
			})
		},
	}
	addAdminFlags(cmd, opts)
	return cmd
}

func viewCluster(md kadm.Metadata) clusterView {
	v := clusterView{ClusterID: md.Cluster, Controller: md.Controller, Topics: len(md.Topics),
		UnderReplicated: []clusterPartition{}, Offline: []clusterPartition{}}
	for _, b := range md.Brokers {
		cb := clusterBroker{ID: b.NodeID, Host: b.Host, Port: b.Port}
		if b.Rack != nil {
			cb.Rack = *b.Rack
		}
		v.Brokers = append(v.Brokers, cb)
	}
	sort.Slice(v.Brokers, func(i, j int) bool { return v.Brokers[i].ID < v.Brokers[j].ID })
	for _, t := range md.Topics.Sorted() {
		for _, p := range t.Partitions.Sorted() {
			v.Partitions++
			cp := clusterPartition{Topic: t.Topic, partitionView: partitionView{Partition: p.Partition, Leader: p.Leader,
				LeaderEpoch: p.LeaderEpoch, Replicas: nonNil(p.Replicas), ISR: nonNil(p.ISR), Offline: p.OfflineReplicas}}
			switch {
			case p.Leader < 0:
				v.Offline = append(v.Offline, cp)
			case len(p.ISR) < len(p.Replicas):
				v.UnderReplicated = append(v.UnderReplicated, cp)
			}
		}
	}
	return v
}

func writeCluster(w io.Writer, f outputFormat, v clusterView) error {
	if f == formatJSON {
		return writeJSON(w, v)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Cluster %s: %d broker(s), controller %d, %d topic(s), %d partition(s)\n\n",
		v.ClusterID, len(v.Brokers), v.Controller, v.Topics, v.Partitions)
	fmt.Fprintln(tw, "BROKER\tHOST\tPORT\tRACK\tCONTROLLER")
	for _, b := range v.Brokers {
		ctl := ""
		if b.ID == v.Controller {
			ctl = "yes"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\n", b.ID, b.Host, b.Port, dash(b.Rack), ctl)
	}
	for _, section := range []struct {
		title string
		rows  []clusterPartition
	}{{"Under-replicated partitions", v.UnderReplicated}, {"Offline partitions", v.Offline}} {
		fmt.Fprintf(tw, "\n%s: %d\n", section.title, len(section.rows))
		if len(section.rows) == 0 {
			continue
		}
		fmt.Fprintln(tw, "TOPIC\tPARTITION\tLEADER\tREPLICAS\tISR")
		for _, p := range section.rows {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", p.Topic, p.Partition, p.Leader, joinIDs(p.Replicas), joinIDs(p.ISR))
		}
	}
	return tw.Flush()
}
