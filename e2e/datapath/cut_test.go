package datapath

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/testkit/faultproxy"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// proxiedBroker starts a broker behind a faultproxy: the broker advertises
// the proxy's address, so every client connection after the bootstrap one
// goes through the proxy too. It fails t unless Metadata names the proxy.
func proxiedBroker(t *testing.T, args ...string) (*testkit.BrokerProcess, *faultproxy.Proxy) {
	t.Helper()
	port, err := testkit.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := faultproxy.New("127.0.0.1:" + strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	b := testkit.StartBroker(t, testkit.BrokerConfig{Port: port,
		Args: append([]string{"--advertised.listeners", "PLAINTEXT://" + proxy.Addr()}, args...)})

	cl := newClient(t, proxy.Addr())
	md, err := kmsg.NewPtrMetadataRequest().RequestWith(deadline(t, 20*time.Second), cl)
	if err != nil {
		t.Fatalf("metadata through the proxy: %v", err)
	}
	if len(md.Brokers) != 1 || net.JoinHostPort(md.Brokers[0].Host, strconv.Itoa(int(md.Brokers[0].Port))) != proxy.Addr() {
		t.Fatalf("broker advertises %+v, want the proxy %s", md.Brokers, proxy.Addr())
	}
	return b, proxy
}

// TestIdempotentProduceThroughCuts produces with franz-go's idempotent
// producer (acks=all) while every client connection is cut several
// times, once with the proxy refusing reconnections for a while; then
// every record must be there exactly once, in order, with dense offsets.
func TestIdempotentProduceThroughCuts(t *testing.T) {
	_, proxy := proxiedBroker(t)
	requireDataPath(t, proxy.Addr())
	const partitions = 3
	n := scaled(300_000, 30_000)
	const cuts = 6
	topic := topicName(t, "cut")
	createTopic(t, proxy.Addr(), topic, partitions, nil)
	base := timeBase()

	// Each cut waits for gap more acknowledgements after the previous
	// one: they prove the producer reconnected, so every cut has a live
	// connection to break.
	gap := int64(n / (cuts + 2))
	var watch ackWatch
	onAck := func(*kgo.Record) { watch.ack() }

	producer := franzProducer(t, proxy.Addr(),
		// Many small requests, few records buffered: cuts land
		// mid-request, and acknowledgements come in small steps.
		kgo.ProducerLinger(time.Millisecond),
		kgo.ProducerBatchMaxBytes(32<<10),
		kgo.MaxBufferedRecords(10_000),
		kgo.ProducerBatchCompression(kgo.SnappyCompression()),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var produceErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		produceErr = produceFranz(ctx, producer, topic, partitions, n, base, "snappy", onAck)
	}()

	produceDone := make(chan struct{})
	go func() { wg.Wait(); close(produceDone) }()
	for k := range cuts {
		select {
		case <-watch.when(watch.count() + gap):
		case <-produceDone:
			t.Fatalf("the producer stopped after %d acknowledgements, before cut %d: %v", watch.count(), k+1, produceErr)
		}
		down := k == cuts/2
		if down {
			proxy.SetDown(true)
		}
		before := proxy.Stats()
		cut := proxy.CutAll()
		t.Logf("cut %d after %d acknowledgements: %d connections (so far %d closed by the client, %d by the broker)",
			k+1, watch.count(), cut, before.ClientClosed, before.TargetClosed)
		if cut == 0 {
			t.Errorf("cut %d found no connection to cut: is the client going around the proxy?", k+1)
		}
		if down {
			// A while with no way back in: the producer's retries fail
			// at connect time and must not give up or double anything.
			time.Sleep(300 * time.Millisecond)
			proxy.SetDown(false)
		}
	}
	<-produceDone
	if produceErr != nil {
		t.Fatalf("produce through cuts: %v", produceErr)
	}
	s := proxy.Stats()
	t.Logf("proxy: %d connections accepted, %d refused, %d cut, %d closed by the client, %d closed by the broker",
		s.Accepted, s.Refused, s.Cut, s.ClientClosed, s.TargetClosed)

	v := newVerifier(n, partitions, "snappy", base)
	consumeFranz(deadline(t, 2*time.Minute), t, proxy.Addr(), topic, partitions, v)
	if msg := v.result(); msg != "" {
		t.Fatal(msg)
	}
}
