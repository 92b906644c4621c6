package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	groupOffsetDesc = desc("kafka_consumergroup_current_offset",
		"The group's committed offset of the partition (kafka_exporter's name; Kafka has no broker-side metric).",
		"consumergroup", "topic", "partition")
	groupLagDesc = desc("kafka_consumergroup_lag",
		"The partition's high watermark minus the group's committed offset, computed by the broker that coordinates the group, for partitions it hosts (kafka_exporter's name).",
		"consumergroup", "topic", "partition")
)

// lagCollector reads the committed offsets of the groups coordinated
// here and the high watermarks of the partitions led here.
type lagCollector struct{ src Sources }

func (c *lagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- groupOffsetDesc
	ch <- groupLagDesc
}

func (c *lagCollector) Collect(ch chan<- prometheus.Metric) {
	routes := c.src.Routes.Load()
	for _, o := range c.src.Committed() {
		p := strconv.Itoa(int(o.Partition))
		ch <- prometheus.MustNewConstMetric(groupOffsetDesc, prometheus.GaugeValue, float64(o.Offset), o.Group, o.Topic, p)
		t := routes.Topics[o.Topic]
		if t == nil {
			continue
		}
		v := t.View(o.Partition)
		if v == nil {
			continue
		}
		hw := v.Stats().KnownHighWatermark
		if hw < 0 {
			continue // not open here
		}
		ch <- prometheus.MustNewConstMetric(groupLagDesc, prometheus.GaugeValue, float64(max(0, hw-o.Offset)), o.Group, o.Topic, p)
	}
}
