package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

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
	// LoopBusy is the time the event loops have spent serving traffic
	// since they started, over EventLoops loops.
	LoopBusy   time.Duration
	EventLoops int
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
	loopBusyDesc = desc("samsa_network_eventloop_busy_seconds_total",
		"Time the network event loops spent serving connections' traffic (reading, decoding, handing requests on), summed over the loops; rate() over the loop count is their busy ratio.")
	loopIdleDesc = desc("kafka_network_socketserver_networkprocessoravgidlepercent",
		"Share of time (0 to 1) the network event loops were idle since the previous scrape, averaged over the loops (Kafka's NetworkProcessorAvgIdlePercent).")
	netMutesDesc = desc("samsa_network_backpressure_mutes_total",
		"Times a connection stopped being read because it had too much in flight.")
)

// WatchNetwork registers a collector that reads stats when scraped.
func (b *Broker) WatchNetwork(stats func() NetStats) {
	b.reg.MustRegister(&networkCollector{stats: stats, since: time.Now()})
}

type networkCollector struct {
	stats func() NetStats

	mu    sync.Mutex    // scrapes may overlap
	since time.Time     // the previous scrape (or the start)
	busy  time.Duration // LoopBusy then
}

// idle is the loops' idle share since the previous scrape.
func (c *networkCollector) idle(now time.Time, busy time.Duration, loops int) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	elapsed := now.Sub(c.since) * time.Duration(max(loops, 1))
	spent := busy - c.busy
	c.since, c.busy = now, busy
	if elapsed <= 0 {
		return 1
	}
	return min(max(1-float64(spent)/float64(elapsed), 0), 1)
}

func (c *networkCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{connectionsDesc, connectionsAcceptedDesc, connectionsRefusedDesc, netRequestsDesc,
		netResponsesDesc, netBytesDesc, netSendfileDesc, netBadDesc, netMutesDesc, loopBusyDesc, loopIdleDesc} {
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
	ch <- prometheus.MustNewConstMetric(loopBusyDesc, prometheus.CounterValue, s.LoopBusy.Seconds())
	ch <- prometheus.MustNewConstMetric(loopIdleDesc, prometheus.GaugeValue, c.idle(time.Now(), s.LoopBusy, s.EventLoops))
}
