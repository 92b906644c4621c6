package e2e

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// measureEnv gates the measurements: they take tens of seconds and load
// both cores, so they do not run with the ordinary tests.
const measureEnv = "SAMSA_MEASURE"

func requireMeasure(t *testing.T) {
	if os.Getenv(measureEnv) != "1" {
		t.Skipf("measurement: run with %s=1", measureEnv)
	}
}

// TestMeasureStartupAndIdleMemory starts the broker several times on a
// fresh data directory and reports the median time from process start to
// the first accepted TCP connection, and the resident memory once idle.
// Targets: under 100 ms and under 30 MiB. It reports; it does not assert
// timings (a shared 2-core machine makes them noisy).
func TestMeasureStartupAndIdleMemory(t *testing.T) {
	requireMeasure(t)
	const runs = 9
	var startups []time.Duration
	var rss, peak []int64
	for i := 0; i < runs; i++ {
		b, err := testkit.LaunchBroker(testkit.BrokerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		startups = append(startups, b.StartupTime())
		time.Sleep(time.Second) // idle: let start-up garbage be collected
		u, err := b.Usage()
		if err != nil {
			t.Fatal(err)
		}
		rss, peak = append(rss, u.RSSBytes), append(peak, u.PeakRSS)
		if err := b.Stop(); err != nil {
			t.Error(err)
		}
		b.Close()
	}
	slices.Sort(startups)
	slices.Sort(rss)
	slices.Sort(peak)
	t.Logf("startup to first accepted connection, %d runs: median %v (min %v, max %v); target < 100ms",
		runs, startups[runs/2].Round(100*time.Microsecond), startups[0].Round(100*time.Microsecond),
		startups[runs-1].Round(100*time.Microsecond))
	t.Logf("idle RSS 1s after start: median %.1f MiB (max %.1f), peak RSS median %.1f MiB; target < 30 MiB",
		mib(rss[runs/2]), mib(rss[runs-1]), mib(peak[runs/2]))
}

// TestMeasureMetadataThroughput sends pipelined Metadata requests (all
// topics of a broker holding 10 topics × 4 partitions) on 1 and on 64
// connections for a few seconds each and reports requests per second and
// the broker's CPU time per request.
func TestMeasureMetadataThroughput(t *testing.T) {
	requireMeasure(t)
	b := testkit.StartBroker(t, testkit.BrokerConfig{})
	adm := newAdmin(t, b.Addr())
	for i := 0; i < 10; i++ {
		mustCreate(t, adm, fmt.Sprintf("measure-%02d", i), 4, nil)
	}
	for _, conns := range []int{1, 8, 64} {
		rate, cpuPerReq, err := metadataLoad(b, conns, 8, 3*time.Second)
		if err != nil {
			t.Fatalf("%d connections: %v", conns, err)
		}
		t.Logf("Metadata v12 (10 topics, 40 partitions), %2d connections × 8 pipelined: %8.0f req/s, broker CPU %.1f µs/req",
			conns, rate, cpuPerReq.Seconds()*1e6)
	}
}

// metadataLoad keeps depth requests in flight on each of conns raw
// connections for d, checking every response's correlation id, and
// returns requests per second and broker CPU per request.
func metadataLoad(b *testkit.BrokerProcess, conns, depth int, d time.Duration) (float64, time.Duration, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	format := kmsg.NewRequestFormatter(kmsg.FormatterClientID("measure"))

	var wg sync.WaitGroup
	counts := make([]int, conns)
	errs := make([]error, conns)
	cpuBefore, err := b.Usage()
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	deadline := start.Add(d)
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, err := net.Dial("tcp", b.Addr())
			if err != nil {
				errs[i] = err
				return
			}
			defer c.Close()
			var sent, got int32
			buf := make([]byte, 0, 256)
			send := func() error {
				buf = format.AppendRequest(buf[:0], req, sent)
				sent++
				_, err := c.Write(buf)
				return err
			}
			for sent < int32(depth) {
				if errs[i] = send(); errs[i] != nil {
					return
				}
			}
			resp := make([]byte, 64<<10)
			for {
				var size [4]byte
				if _, err := io.ReadFull(c, size[:]); err != nil {
					errs[i] = err
					return
				}
				n := int(binary.BigEndian.Uint32(size[:]))
				if n > len(resp) {
					resp = make([]byte, n)
				}
				if _, err := io.ReadFull(c, resp[:n]); err != nil {
					errs[i] = err
					return
				}
				if corr := int32(binary.BigEndian.Uint32(resp)); corr != got {
					errs[i] = fmt.Errorf("response %d has correlation id %d", got, corr)
					return
				}
				got++
				if time.Now().After(deadline) {
					if got == sent {
						counts[i] = int(got)
						return
					}
					continue // drain what is in flight
				}
				if errs[i] = send(); errs[i] != nil {
					return
				}
			}
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpuAfter, err := b.Usage()
	if err != nil {
		return 0, 0, err
	}
	total := 0
	for i := range counts {
		if errs[i] != nil {
			return 0, 0, fmt.Errorf("connection %d: %w", i, errs[i])
		}
		total += counts[i]
	}
	if total == 0 {
		return 0, 0, fmt.Errorf("no responses")
	}
	cpu := time.Duration((cpuAfter.CPUSeconds - cpuBefore.CPUSeconds) * float64(time.Second))
	return float64(total) / elapsed.Seconds(), cpu / time.Duration(total), nil
}

// TestMeasureManyPartitions creates 200 topics of 10 partitions and
// reports how long that takes, the broker's memory and open files with
// them idle, and how long a clean restart takes.
func TestMeasureManyPartitions(t *testing.T) {
	requireMeasure(t)
	b := testkit.StartBroker(t, testkit.BrokerConfig{})
	adm := newAdmin(t, b.Addr())
	idle, err := b.Usage()
	if err != nil {
		t.Fatal(err)
	}
	const topics, partitions = 200, 10
	began := time.Now()
	for i := 0; i < topics; i += 20 {
		var names []string
		for j := i; j < i+20; j++ {
			names = append(names, fmt.Sprintf("many-%03d", j))
		}
		resps, err := adm.CreateTopics(testContext(t), partitions, 1, nil, names...)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resps {
			if r.Err != nil {
				t.Fatalf("create %s: %v %s", r.Topic, r.Err, r.ErrMessage)
			}
		}
	}
	created := time.Since(began)
	time.Sleep(time.Second)
	loaded, err := b.Usage()
	if err != nil {
		t.Fatal(err)
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", b.PID()))
	t.Logf("%d partitions created in %v (%.1f ms per topic of %d)", topics*partitions, created.Round(time.Millisecond),
		float64(created.Milliseconds())/topics, partitions)
	t.Logf("RSS idle with no topics %.1f MiB; with %d partitions %.1f MiB (%.1f KiB per partition); %d open files",
		mib(idle.RSSBytes), topics*partitions, mib(loaded.RSSBytes),
		float64(loaded.RSSBytes-idle.RSSBytes)/1024/float64(topics*partitions), len(fds))

	req := kmsg.NewPtrMetadataRequest()
	began = time.Now()
	const rounds = 20
	for i := 0; i < rounds; i++ {
		resp, err := req.RequestWith(testContext(t), newClient(t, b.Addr()))
		if err != nil || len(resp.Topics) != topics {
			t.Fatalf("metadata: %v, %d topics", err, len(resp.Topics))
		}
	}
	t.Logf("Metadata of all %d topics (new client each, so with connection setup): %v per request",
		topics, (time.Since(began) / rounds).Round(10*time.Microsecond))

	adm.Close()
	began = time.Now()
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Since(began)
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("clean stop took %v; start with %d partitions took %v (process start to first accepted connection)",
		stopped.Round(time.Millisecond), topics*partitions, b.StartupTime().Round(time.Millisecond))
	after, err := b.Usage()
	if err == nil {
		t.Logf("RSS right after the restart %.1f MiB", mib(after.RSSBytes))
	}
}
