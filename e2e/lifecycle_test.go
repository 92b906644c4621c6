package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/testkit"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// partitionDirs lists the data directory entries that belong to topic
// (Kafka's TOPIC-N directories, and their renamed forms while deleted).
func partitionDirs(t *testing.T, dataDir, topic string) []string {
	t.Helper()
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), topic+"-") || strings.HasPrefix(e.Name(), topic+".") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestDeleteRemovesPartitionFiles(t *testing.T) {
	b := sharedBroker(t)
	adm := newAdmin(t, b.Addr())
	topic := topicName(t, "files")
	mustCreate(t, adm, topic, 3, nil)
	eventually(t, 5*time.Second, func() error {
		for p := 0; p < 3; p++ {
			if _, err := os.Stat(filepath.Join(b.DataDir(), topic+"-"+strconv.Itoa(p))); err != nil {
				return fmt.Errorf("after creating 3 partitions: %v", err)
			}
		}
		return nil
	})
	if r, err := adm.DeleteTopics(testContext(t), topic); err != nil || r[topic].Err != nil {
		t.Fatalf("delete: %v %+v", err, r)
	}
	// Kafka renames a deleted partition's directory to
	// TOPIC-N.ID-delete at once and removes it after file.delete.delay.ms
	// (60s); what must go at once is every live TOPIC-N directory.
	eventually(t, 10*time.Second, func() error {
		var live []string
		for _, d := range partitionDirs(t, b.DataDir(), topic) {
			if !strings.HasSuffix(d, "-delete") {
				live = append(live, d)
			}
		}
		if len(live) > 0 {
			return fmt.Errorf("after deleting %s its partition directories remain: %v", topic, live)
		}
		return nil
	})
}

func TestDynamicBrokerConfigSurvivesRestart(t *testing.T) {
	b := testkit.StartBroker(t, testkit.BrokerConfig{})
	adm := newAdmin(t, b.Addr())
	brokers, err := adm.ListBrokers(testContext(t))
	if err != nil || len(brokers) != 1 {
		t.Fatalf("ListBrokers: %v %v", brokers, err)
	}
	id := brokers[0].NodeID
	set, err := adm.AlterBrokerConfigs(testContext(t), []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "log.retention.ms", Value: ptr("3333333")},
	}, id)
	if err != nil || len(set) != 1 || set[0].Err != nil {
		t.Fatalf("set a dynamic broker config: %v %+v", err, set)
	}
	adm.Close()
	if err := b.Restart(); err != nil {
		t.Fatal(err)
	}
	adm = newAdmin(t, b.Addr())
	rcs, err := adm.DescribeBrokerConfigs(testContext(t), id)
	if err != nil || len(rcs) != 1 {
		t.Fatalf("describe broker: %v %+v", err, rcs)
	}
	// Kafka keeps dynamic broker configs (in ZooKeeper or the metadata log)
	// across restarts.
	wantConfig(t, rcs[0], "log.retention.ms", "3333333", kmsg.ConfigSourceDynamicBrokerConfig)
}

// SIGTERM while clients are connected and requests are in flight: the
// broker still exits 0, promptly, and every request it took is answered
// or its connection closed (never left hanging).
func TestStopWithBusyClients(t *testing.T) {
	b := testkit.StartBroker(t, testkit.BrokerConfig{})
	adm := newAdmin(t, b.Addr())
	mustCreate(t, adm, topicName(t, "busy"), 4, nil)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var hung sync.Map
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			conn, err := net.Dial("tcp", b.Addr())
			if err != nil {
				return
			}
			defer conn.Close()
			req := kmsg.NewPtrMetadataRequest()
			req.Version = 12
			format := kmsg.NewRequestFormatter(kmsg.FormatterClientID("busy"))
			var corr int32
			for ctx.Err() == nil {
				if _, err := conn.Write(format.AppendRequest(nil, req, corr)); err != nil {
					return
				}
				_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
				var size [4]byte
				if _, err := conn.Read(size[:]); err != nil {
					if ne, ok := err.(net.Error); ok && ne.Timeout() {
						hung.Store(i, corr)
					}
					return // closed by the shutdown: fine
				}
				buf := make([]byte, int(size[0])<<24|int(size[1])<<16|int(size[2])<<8|int(size[3]))
				if _, err := io.ReadFull(conn, buf); err != nil {
					return
				}
				corr++
			}
		}(i)
	}
	time.Sleep(300 * time.Millisecond)
	began := time.Now()
	if err := b.Stop(); err != nil {
		t.Fatalf("SIGTERM with busy clients: %v", err)
	}
	t.Logf("stopped in %v with 8 busy connections", time.Since(began).Round(time.Millisecond))
	cancel()
	wg.Wait()
	hung.Range(func(k, v any) bool {
		t.Errorf("connection %v: request %v neither answered nor closed within 10s of the shutdown", k, v)
		return true
	})
}

func TestSecondBrokerOnSameDataDirRefused(t *testing.T) {
	b := testkit.StartBroker(t, testkit.BrokerConfig{})
	_, err := testkit.LaunchBroker(testkit.BrokerConfig{DataDir: b.DataDir(), ReadyTimeout: 15 * time.Second})
	if err == nil {
		t.Fatal("a second broker started on a data directory in use")
	}
	if !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "in use") {
		t.Errorf("the second broker should exit saying the directory is in use: %v", err)
	}
	if !b.Running() {
		t.Error("the first broker died")
	}
}

func TestServeRefusesABusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = testkit.LaunchBroker(testkit.BrokerConfig{Port: port, ReadyTimeout: 15 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") {
		t.Errorf("serve on a port in use: %v; want it to exit with an error", err)
	}
}

// A connected client rides through a restart: the broker comes back on
// the same port (the server side of the old connections lingers in
// TIME_WAIT, so the listener must reuse the address) and the client's
// next request is served.
func TestClientRidesThroughRestart(t *testing.T) {
	b := testkit.StartBroker(t, testkit.BrokerConfig{})
	cl := newClient(t, b.Addr())
	adm := kadm.NewClient(cl)
	topic := topicName(t, "ride")
	mustCreate(t, adm, topic, 1, nil)
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	if _, err := req.RequestWith(testContext(t), cl); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := b.Restart(); err != nil {
			t.Fatalf("restart %d with a connected client: %v", i+1, err)
		}
		resp, err := req.RequestWith(testContext(t), cl)
		if err != nil || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("after restart %d the client's request: %v %+v", i+1, err, resp)
		}
	}
}
