package wiring_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors"
	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/internal/wiring"
)

// scrape reads /metrics and parses the exposition format.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// gather reads a broker's registry without HTTP.
func gather(t *testing.T, b *actors.Broker) map[string]*dto.MetricFamily {
	t.Helper()
	got, err := b.Metrics().Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	fams := make(map[string]*dto.MetricFamily, len(got))
	for _, f := range got {
		fams[f.GetName()] = f
	}
	return fams
}

// sum adds the values of family's series whose labels include want.
func sum(fams map[string]*dto.MetricFamily, family string, want map[string]string) (float64, int) {
	f := fams[family]
	if f == nil {
		return 0, 0
	}
	var total float64
	n := 0
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		n++
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Histogram != nil:
			total += float64(m.Histogram.GetSampleCount())
		case m.Untyped != nil:
			total += m.Untyped.GetValue()
		}
	}
	return total, n
}

// TestMetricsFollowAWorkload runs a franz-go workload on a broker with an
// HTTP listener (produce N records, consume them in a group and commit,
// produce more, one produce to a partition that does not exist) and
// checks that /metrics moved exactly as it must.
func TestMetricsFollowAWorkload(t *testing.T) {
	cfg, err := config.Load(config.Input{Origin: "test", Values: map[string]string{
		"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": t.TempDir(), "samsa.http.listeners": "127.0.0.1:0",
		"offsets.topic.num.partitions": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	node, err := wiring.Start(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Stop(context.Background()) })
	metricsURL := "http://" + node.Web.Addrs()[0].String() + "/metrics"
	broker := fmt.Sprintf("%s:%d", node.Host, node.Port)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const topic, group, n, more, partitions = "metered", "metered-group", 200, 50, 3
	// Uncompressed, so that byte counts compare with the values' sizes.
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	produce := func(count int, from int) int {
		size := 0
		for i := range count {
			r := &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(from + i)), Value: []byte(strings.Repeat("v", 100))}
			size += len(r.Value)
			cl.Produce(ctx, r, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		return size
	}
	valueBytes := produce(n, 0)

	consumer, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	for got := 0; got < n; {
		fs := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", got, n, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatal(err) })
		got += fs.NumRecords()
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}

	fams := scrape(t, metricsURL)
	tl := map[string]string{"topic": topic}
	if v, _ := sum(fams, "kafka_server_brokertopicmetrics_messagesin_total", tl); v != n {
		t.Errorf("messages in for %s = %v, want %d", topic, v, n)
	}
	if v, _ := sum(fams, "kafka_server_brokertopicmetrics_bytesin_total", tl); v < float64(valueBytes) {
		t.Errorf("bytes in for %s = %v, want at least the %d value bytes", topic, v, valueBytes)
	}
	if v, _ := sum(fams, "kafka_server_brokertopicmetrics_bytesout_total", tl); v < float64(valueBytes) {
		t.Errorf("bytes out for %s = %v, want at least the %d value bytes consumed", topic, v, valueBytes)
	}
	if v, series := sum(fams, "kafka_log_log_logendoffset", tl); v != n || series != partitions {
		t.Errorf("log end offsets of %s sum to %v over %d partitions, want %d over %d", topic, v, series, n, partitions)
	}
	if v, _ := sum(fams, "kafka_log_log_numlogsegments", tl); v != partitions {
		t.Errorf("segments of %s = %v, want one per partition (%d)", topic, v, partitions)
	}
	// Nothing but the produced batches is in the topic's logs.
	bytesIn, _ := sum(fams, "kafka_server_brokertopicmetrics_bytesin_total", tl)
	if v, _ := sum(fams, "kafka_log_log_size", tl); v != bytesIn {
		t.Errorf("log size of %s = %v, want the %v bytes produced", topic, v, bytesIn)
	}
	for _, api := range []string{"Produce", "Fetch", "FetchConsumer", "OffsetCommit", "JoinGroup"} {
		if v, _ := sum(fams, "kafka_network_requestmetrics_requests_total", map[string]string{"request": api}); v <= 0 {
			t.Errorf("requests_total{request=%q} = %v, want > 0", api, v)
		}
	}
	fetches, _ := sum(fams, "kafka_network_requestmetrics_requests_total", map[string]string{"request": "Fetch"})
	consumerFetches, _ := sum(fams, "kafka_network_requestmetrics_requests_total", map[string]string{"request": "FetchConsumer"})
	if followerFetches, _ := sum(fams, "kafka_network_requestmetrics_requests_total", map[string]string{"request": "FetchFollower"}); consumerFetches+followerFetches != fetches || followerFetches != 0 {
		t.Errorf("fetches: %v in all, %v from consumers, %v from followers on a single broker", fetches, consumerFetches, followerFetches)
	}
	// Every produce was answered before Flush returned: once each
	// response's write has been accounted (just after the client may read
	// it), as many of each phase observed as requests counted.
	produces, _ := sum(fams, "kafka_network_requestmetrics_requests_total", map[string]string{"request": "Produce"})
	fams = scrapeUntil(t, metricsURL, func(fams map[string]*dto.MetricFamily) string {
		for _, phase := range []string{"requestqueuetime", "localtime", "remotetime", "responsesendtime", "totaltime"} {
			name := "kafka_network_requestmetrics_" + phase + "_seconds"
			if v, _ := sum(fams, name, map[string]string{"request": "Produce"}); v != produces {
				return fmt.Sprintf("%s{request=Produce} observed %v times, requests counted = %v", name, v, produces)
			}
		}
		return ""
	})
	// The phases are cut from the same clock readings: they add up to the
	// total, and acks=all produces waited for their fsync after appending.
	produceSums := map[string]float64{}
	for _, phase := range []string{"requestqueuetime", "localtime", "remotetime", "responsesendtime", "totaltime"} {
		produceSums[phase] = histogramSum(fams, "kafka_network_requestmetrics_"+phase+"_seconds", "Produce")
	}
	parts := produceSums["requestqueuetime"] + produceSums["localtime"] + produceSums["remotetime"] + produceSums["responsesendtime"]
	if d := parts - produceSums["totaltime"]; d > 1e-6 || d < -1e-6 || produceSums["remotetime"] <= 0 {
		t.Errorf("Produce phases %v do not add up to the total, or no remote time", produceSums)
	}
	// The loops served the traffic: some busy time, an idle share in [0, 1].
	if v, series := sum(fams, "samsa_network_eventloop_busy_seconds_total", nil); v <= 0 || series != 1 {
		t.Errorf("event loops' busy time = %v (%d series) after a workload", v, series)
	}
	if v, series := sum(fams, "kafka_network_socketserver_networkprocessoravgidlepercent", nil); v < 0 || v > 1 || series != 1 {
		t.Errorf("network processors' idle share = %v (%d series), want one in [0, 1]", v, series)
	}
	// Default flush policy (group): the appends were fsynced.
	if v, _ := sum(fams, "kafka_log_logflushstats_logflush_seconds", nil); v <= 0 {
		t.Errorf("no log flush observed")
	}
	for name, want := range map[string]float64{
		"kafka_controller_kafkacontroller_activecontrollercount":  1,
		"kafka_server_replicamanager_underreplicatedpartitions":   0,
		"kafka_server_replicamanager_offlinereplicacount":         0,
		"kafka_controller_kafkacontroller_offlinepartitionscount": 0,
		// The topic's partitions and __consumer_offsets', all led here.
		"kafka_server_replicamanager_leadercount":    partitions + 3,
		"kafka_server_replicamanager_partitioncount": partitions + 3,
	} {
		if v, series := sum(fams, name, nil); v != want || series != 1 {
			t.Errorf("%s = %v (%d series), want %v", name, v, series, want)
		}
	}
	if _, series := sum(fams, "kafka_log_logcleaner_cleanings_total", nil); series != 1 {
		t.Errorf("the log cleaner's figures are missing (%d series)", series)
	}
	if v, _ := sum(fams, "kafka_server_socketservermetrics_connection_count", map[string]string{"listener": "PLAINTEXT"}); v < 2 {
		t.Errorf("connections on the PLAINTEXT listener = %v with two clients connected", v)
	}
	gl := map[string]string{"consumergroup": group, "topic": topic}
	if v, series := sum(fams, "kafka_consumergroup_current_offset", gl); v != n || series != partitions {
		t.Errorf("committed offsets of %s sum to %v over %d partitions, want %d over %d", group, v, series, n, partitions)
	}
	if v, series := sum(fams, "kafka_consumergroup_lag", gl); v != 0 || series != partitions {
		t.Errorf("lag of %s after its commit = %v over %d partitions, want 0 over %d", group, v, series, partitions)
	}

	// More records, not consumed: the lag is exactly those.
	produce(more, n)
	fams = scrape(t, metricsURL)
	if v, _ := sum(fams, "kafka_consumergroup_lag", gl); v != more {
		t.Errorf("lag of %s after %d more records = %v", group, more, v)
	}
	if v, _ := sum(fams, "kafka_server_brokertopicmetrics_messagesin_total", tl); v != n+more {
		t.Errorf("messages in for %s = %v, want %d", topic, v, n+more)
	}

	// A produce to a partition that does not exist: one error counted.
	errs := map[string]string{"request": "Produce", "error": "UNKNOWN_TOPIC_OR_PARTITION"}
	before, _ := sum(fams, "kafka_network_requestmetrics_errors_total", errs)
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partitions + 7
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 3 {
		t.Fatalf("produce to partition %d answered code %d, want UNKNOWN_TOPIC_OR_PARTITION", rp.Partition, code)
	}
	fams = scrape(t, metricsURL)
	if v, _ := sum(fams, "kafka_network_requestmetrics_errors_total", errs); v != before+1 {
		t.Errorf("Produce UNKNOWN_TOPIC_OR_PARTITION errors = %v, want %v", v, before+1)
	}
	// A fetch at the log end with min_bytes 1 parks until its max wait:
	// remote time for consumers' fetches.
	remoteBefore := histogramSum(fams, "kafka_network_requestmetrics_remotetime_seconds", "FetchConsumer")
	fetch := kmsg.NewPtrFetchRequest()
	fetch.ReplicaID, fetch.MaxWaitMillis, fetch.MinBytes, fetch.MaxBytes = -1, 100, 1, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.PartitionMaxBytes = 0, 1<<20
	hw, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := hw.Lookup(topic, 0)
	fp.FetchOffset = end.Offset
	details, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	ft.TopicID = details[topic].ID // Fetch v13+ names topics by id
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	fetched, err := fetch.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if code := fetched.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("fetch at the log end answered code %d", code)
	}
	scrapeUntil(t, metricsURL, func(fams map[string]*dto.MetricFamily) string {
		if v := histogramSum(fams, "kafka_network_requestmetrics_remotetime_seconds", "FetchConsumer"); v <= remoteBefore {
			return fmt.Sprintf("FetchConsumer remote time %v, no more than %v before a parked fetch", v, remoteBefore)
		}
		return ""
	})

	fams = checkTransactionMetrics(ctx, t, broker, topic, metricsURL)
	checkDashboardAndDocs(t, fams)
}

// histogramSum is the sum of the observations of family's series for
// request.
func histogramSum(fams map[string]*dto.MetricFamily, family, request string) float64 {
	var total float64
	for _, m := range fams[family].GetMetric() {
		for _, l := range m.Label {
			if l.GetName() == "request" && l.GetValue() == request {
				total += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return total
}

// scrapeUntil scrapes url until check finds nothing wrong (it returns
// what is wrong, or ""), failing with its last complaint after a deadline:
// for figures that settle just after the client's answer.
func scrapeUntil(t *testing.T, url string, check func(map[string]*dto.MetricFamily) string) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		fams := scrape(t, url)
		wrong := check(fams)
		if wrong == "" {
			return fams
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal(wrong)
		}
	}
}

// checkTransactionMetrics runs 3 committed and 1 aborted transactions
// with franz-go and one left open, and checks the coordinators' figures
// exactly; it returns the last scrape.
func checkTransactionMetrics(ctx context.Context, t *testing.T, broker, topic, metricsURL string) map[string]*dto.MetricFamily {
	t.Helper()
	const commits, aborts = 3, 1
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.TransactionalID("metered-txn"), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	run := func(end kgo.TransactionEndTry, leaveOpen bool) {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("in a transaction")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if leaveOpen {
			return
		}
		if err := cl.EndTransaction(ctx, end); err != nil {
			t.Fatal(err)
		}
	}
	for range commits {
		run(kgo.TryCommit, false)
	}
	for range aborts {
		run(kgo.TryAbort, false)
	}
	run(kgo.TryCommit, true)
	// EndTxn is answered once the prepare record is durable; the markers
	// follow, so the figures settle a moment later.
	return scrapeUntil(t, metricsURL, func(fams map[string]*dto.MetricFamily) string {
		for outcome, want := range map[string]float64{"commit": commits, "abort": aborts} {
			if v, _ := sum(fams, "samsa_transaction_ended_total", map[string]string{"outcome": outcome}); v != want {
				return fmt.Sprintf("transactions ended with %s = %v, want %v", outcome, v, want)
			}
		}
		if v, _ := sum(fams, "samsa_transaction_marker_seconds", nil); v != commits+aborts {
			return fmt.Sprintf("marker latencies observed = %v, want %d", v, commits+aborts)
		}
		if v, _ := sum(fams, "samsa_transaction_open", map[string]string{"state": "ongoing"}); v != 1 {
			return fmt.Sprintf("ongoing transactions = %v, want the 1 left open", v)
		}
		return ""
	})
}

// metricName finds the samsa and Kafka metric names in a text.
var metricName = regexp.MustCompile(`\b(?:kafka|samsa)_[a-z0-9_]+`)

// checkDashboardAndDocs checks that every metric the Grafana dashboard
// queries is served, and that every family served is in docs/metrics.md.
func checkDashboardAndDocs(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	dash, err := os.ReadFile("../../docs/grafana/samsa.json")
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(dash) {
		t.Fatal("docs/grafana/samsa.json is not valid JSON")
	}
	for _, name := range metricName.FindAllString(string(dash), -1) {
		family := name
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && fams[name] == nil {
				family = base // a histogram's series
			}
		}
		if fams[family] == nil {
			t.Errorf("the dashboard queries %s, which /metrics does not serve", name)
		}
	}
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	for family := range fams {
		if metricName.MatchString(family) && !strings.Contains(string(doc), family) {
			t.Errorf("%s is served but not in docs/metrics.md", family)
		}
	}
}
