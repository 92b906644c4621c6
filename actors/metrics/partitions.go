package metrics

import (
	"slices"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/actors/partition"
	"github.com/samsa-io/samsa/actors/routing"
)

// Sources are what the scrape-time collectors read: the broker's own
// published state, never a partition actor's mailbox.
type Sources struct {
	BrokerID int32
	// Routes are the partitions hosted here, with their views (Stats).
	Routes *routing.Table
	// Cluster is the cluster-mode metadata cache; nil alone.
	Cluster *cluster.Table
	// Committed lists the committed offsets of the groups coordinated
	// here (coordinator.Coordinators.Committed); nil: no lag metrics.
	Committed func() []Committed
}

// Committed is one group's committed offset of one partition.
type Committed struct {
	Group     string
	Topic     string
	Partition int32
	Offset    int64
}

// Watch registers the collectors that read src when scraped.
func (b *Broker) Watch(src Sources) {
	b.reg.MustRegister(&partitionCollector{src: src})
	if src.Committed != nil {
		b.reg.MustRegister(&lagCollector{src: src})
	}
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// The families the partition collector reports: Kafka's name, lowercased,
// with _total on counters (docs/metrics.md maps them).
var (
	messagesInDesc        = desc("kafka_server_brokertopicmetrics_messagesin_total", "Records appended to the topic's partitions led here (Kafka's BrokerTopicMetrics MessagesInPerSec).", "topic")
	bytesInDesc           = desc("kafka_server_brokertopicmetrics_bytesin_total", "Bytes of record batches produced to the topic's partitions led here (BytesInPerSec).", "topic")
	bytesOutDesc          = desc("kafka_server_brokertopicmetrics_bytesout_total", "Record bytes read for consumers' fetches of the topic here, followers' replication excluded (BytesOutPerSec).", "topic")
	logSizeDesc           = desc("kafka_log_log_size", "Bytes of the partition's segment files (kafka.log:type=Log,name=Size).", "topic", "partition")
	logSegmentsDesc       = desc("kafka_log_log_numlogsegments", "Segments of the partition's log, the active one included (NumLogSegments).", "topic", "partition")
	logStartDesc          = desc("kafka_log_log_logstartoffset", "The partition's log start offset (LogStartOffset).", "topic", "partition")
	logEndDesc            = desc("kafka_log_log_logendoffset", "The partition's log end offset (LogEndOffset).", "topic", "partition")
	leaderCountDesc       = desc("kafka_server_replicamanager_leadercount", "Partitions this broker leads (kafka.server:type=ReplicaManager,name=LeaderCount).")
	partitionCountDesc    = desc("kafka_server_replicamanager_partitioncount", "Partitions hosted on this broker, led or followed (PartitionCount).")
	underReplicatedDesc   = desc("kafka_server_replicamanager_underreplicatedpartitions", "Partitions led here whose ISR is smaller than their replica set (UnderReplicatedPartitions).")
	offlineReplicasDesc   = desc("kafka_server_replicamanager_offlinereplicacount", "Partitions hosted here whose log is not open (OfflineReplicaCount).")
	isrShrinksDesc        = desc("kafka_server_replicamanager_isrshrinks_total", "ISR shrinks of partitions led here, the leader's or the controller's (IsrShrinksPerSec).")
	isrExpandsDesc        = desc("kafka_server_replicamanager_isrexpands_total", "ISR expansions of partitions led here, the leader's or the controller's (IsrExpandsPerSec).")
	activeControllerDesc  = desc("kafka_controller_kafkacontroller_activecontrollercount", "1 on the broker that is the active controller, 0 elsewhere (ActiveControllerCount). A single-node broker is its own controller.")
	offlinePartitionsDesc = desc("kafka_controller_kafkacontroller_offlinepartitionscount", "Partitions without a leader, reported by the active controller only (OfflinePartitionsCount).")
	globalPartitionsDesc  = desc("kafka_controller_kafkacontroller_globalpartitioncount", "Partitions in the cluster, reported by the active controller only (GlobalPartitionCount).")
)

// partitionCollector reads every hosted partition's Stats through the
// routing table when scraped.
type partitionCollector struct{ src Sources }

func (c *partitionCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{messagesInDesc, bytesInDesc, bytesOutDesc, logSizeDesc, logSegmentsDesc, logStartDesc,
		logEndDesc, leaderCountDesc, partitionCountDesc, underReplicatedDesc, offlineReplicasDesc, isrShrinksDesc, isrExpandsDesc,
		activeControllerDesc, offlinePartitionsDesc, globalPartitionsDesc} {
		ch <- d
	}
}

func (c *partitionCollector) Collect(ch chan<- prometheus.Metric) {
	routes := c.src.Routes.Load()
	names := make([]string, 0, len(routes.Topics))
	for name := range routes.Topics {
		names = append(names, name)
	}
	slices.Sort(names)
	var leaders, hosted, under, offline, shrinks, expands, localOffline int
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, name := range names {
		t := routes.Topics[name]
		var in, bytesIn, bytesOut int64
		for i, v := range t.Views {
			if v == nil {
				continue
			}
			s := v.Stats()
			hosted++
			in, bytesIn, bytesOut = in+s.MessagesIn, bytesIn+s.BytesIn, bytesOut+s.BytesOut
			shrinks, expands = shrinks+int(s.ISRShrinks), expands+int(s.ISRExpands)
			switch s.Role {
			case partition.RoleNone:
				offline++
				if t.Partitions[i] == nil {
					localOffline++
				}
				continue
			case partition.RoleLeader:
				leaders++
				if s.ISR < s.Replicas {
					under++
				}
			}
			p := strconv.Itoa(i)
			gauge(logSizeDesc, float64(s.Size), name, p)
			gauge(logSegmentsDesc, float64(s.Segments), name, p)
			gauge(logStartDesc, float64(s.LogStartOffset), name, p)
			gauge(logEndDesc, float64(s.LogEndOffset), name, p)
		}
		counter(messagesInDesc, in, name)
		counter(bytesInDesc, bytesIn, name)
		counter(bytesOutDesc, bytesOut, name)
	}
	gauge(leaderCountDesc, float64(leaders))
	gauge(partitionCountDesc, float64(hosted))
	gauge(underReplicatedDesc, float64(under))
	gauge(offlineReplicasDesc, float64(offline))
	counter(isrShrinksDesc, int64(shrinks))
	counter(isrExpandsDesc, int64(expands))
	c.collectController(ch, gauge, localOffline, hosted)
}

// collectController reports the controller's figures: alone the broker is
// its own controller and its partitions the cluster's; in a cluster only
// the active controller reports them, from the metadata cache the
// controller keeps current, as in Kafka.
func (c *partitionCollector) collectController(ch chan<- prometheus.Metric, gauge func(*prometheus.Desc, float64, ...string), localOffline, hosted int) {
	if c.src.Cluster == nil {
		gauge(activeControllerDesc, 1)
		gauge(offlinePartitionsDesc, float64(localOffline))
		gauge(globalPartitionsDesc, float64(hosted))
		return
	}
	view := c.src.Cluster.Load()
	if view == nil || view.ControllerID != c.src.BrokerID {
		gauge(activeControllerDesc, 0)
		return
	}
	var offline, all int
	for _, t := range view.Topics {
		for _, p := range t.Partitions {
			if p == nil {
				continue
			}
			all++
			if p.Leader < 0 {
				offline++
			}
		}
	}
	gauge(activeControllerDesc, 1)
	gauge(offlinePartitionsDesc, float64(offline))
	gauge(globalPartitionsDesc, float64(all))
}
