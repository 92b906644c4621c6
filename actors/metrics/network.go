package metrics

import "github.com/prometheus/client_golang/prometheus"

// NetStats are the network layer's counters (netloop.Stats, which this
// package may not import: the wiring copies them).
type NetStats struct {
	// ConnectionsByListener are the open connections by listener name.
	ConnectionsByListener map[string]int
	ConnectionsAccepted   uint64
	ConnectionsRefused    uint64
	Requests              uint64
	Responses             uint64
	BytesWritten          uint64
	BytesSendfile         uint64
	DecodeErrors          uint64
	FramesRejected        uint64
	Mutes                 uint64
}

var (
	connectionsDesc = desc("kafka_server_socketservermetrics_connection_count",
		"Client connections open, by listener (Kafka's socket-server-metrics connection-count).", "listener")
	connectionsAcceptedDesc = desc("kafka_server_socketservermetrics_connections_accepted_total",
		"Connections accepted (connection-creation-total).")
	connectionsRefusedDesc = desc("samsa_network_connections_refused_total",
		"Connections closed at once by max.connections, max.connections.per.ip or a shutdown.")
	netRequestsDesc  = desc("samsa_network_requests_total", "Requests decoded and handed to the broker.")
	netResponsesDesc = desc("samsa_network_responses_total", "Responses written in full.")
	netBytesDesc     = desc("kafka_server_socketservermetrics_outgoing_byte_total",
		"Bytes put on client sockets (outgoing-byte-total).")
	netSendfileDesc = desc("samsa_network_sendfile_bytes_total", "Record bytes sent with sendfile(2).")
	netBadDesc      = desc("samsa_network_bad_frames_total",
		"Frames refused: too large (frames_rejected) or undecodable (decode_errors); the connection was closed.", "reason")
	netMutesDesc = desc("samsa_network_backpressure_mutes_total",
		"Times a connection stopped being read because it had too much in flight.")
)

// WatchNetwork registers a collector that reads stats when scraped.
func (b *Broker) WatchNetwork(stats func() NetStats) {
	b.reg.MustRegister(&networkCollector{stats: stats})
}

type networkCollector struct{ stats func() NetStats }

func (c *networkCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{connectionsDesc, connectionsAcceptedDesc, connectionsRefusedDesc, netRequestsDesc,
		netResponsesDesc, netBytesDesc, netSendfileDesc, netBadDesc, netMutesDesc} {
		ch <- d
	}
}

func (c *networkCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	for listener, n := range s.ConnectionsByListener {
		ch <- prometheus.MustNewConstMetric(connectionsDesc, prometheus.GaugeValue, float64(n), listener)
	}
	counter(connectionsAcceptedDesc, s.ConnectionsAccepted)
	counter(connectionsRefusedDesc, s.ConnectionsRefused)
	counter(netRequestsDesc, s.Requests)
	counter(netResponsesDesc, s.Responses)
	counter(netBytesDesc, s.BytesWritten)
	counter(netSendfileDesc, s.BytesSendfile)
	counter(netBadDesc, s.FramesRejected, "frames_rejected")
	counter(netBadDesc, s.DecodeErrors, "decode_errors")
	counter(netMutesDesc, s.Mutes)
}
