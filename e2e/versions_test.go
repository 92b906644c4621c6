package e2e

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// roundTrip sends one request at a pinned version on a raw connection and
// decodes the answer at that version.
func roundTrip(t *testing.T, conn net.Conn, req kmsg.Request, resp kmsg.Response, corr int32) {
	t.Helper()
	if _, err := conn.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("versions")).AppendRequest(nil, req, corr)); err != nil {
		t.Fatalf("write: %v", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		t.Fatalf("%s v%d: no answer: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(conn, body); err != nil {
		t.Fatal(err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != corr {
		t.Fatalf("correlation id %d, want %d", got, corr)
	}
	body = body[4:]
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() && req.Key() != 18 {
		body = body[1:] // empty response header tags
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("%s v%d: answer does not decode: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
}

// Every Metadata version answers with the topic, and v0's empty topic list
// means "all topics" (from v1 on, null does and empty means none).
func TestMetadataEveryVersion(t *testing.T) {
	b := sharedBroker(t)
	adm := newAdmin(t, b.Addr())
	topic := topicName(t, "v")
	mustCreate(t, adm, topic, 2, nil)
	conn := dial(t, b.Addr())
	defer conn.Close()

	for v := int16(0); v <= 12; v++ {
		one := kmsg.NewPtrMetadataRequest()
		one.Version = v
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		one.Topics = []kmsg.MetadataRequestTopic{rt}
		resp := kmsg.NewPtrMetadataResponse()
		roundTrip(t, conn, one, resp, int32(v))
		if len(resp.Topics) != 1 || deref(resp.Topics[0].Topic) != topic || resp.Topics[0].ErrorCode != 0 ||
			len(resp.Topics[0].Partitions) != 2 || len(resp.Brokers) != 1 {
			t.Errorf("Metadata v%d for %s: %+v", v, topic, resp)
		}

		empty := kmsg.NewPtrMetadataRequest()
		empty.Version = v
		empty.Topics = []kmsg.MetadataRequestTopic{}
		resp = kmsg.NewPtrMetadataResponse()
		roundTrip(t, conn, empty, resp, 100+int32(v))
		found := false
		for _, tp := range resp.Topics {
			found = found || deref(tp.Topic) == topic
		}
		if v == 0 && !found {
			t.Errorf("Metadata v0 with an empty topic list must describe all topics; got %d without %s", len(resp.Topics), topic)
		}
		if v > 0 && len(resp.Topics) != 0 {
			t.Errorf("Metadata v%d with an empty topic list must describe no topics; got %d", v, len(resp.Topics))
		}
	}
}

// Every version the broker advertises for the admin APIs works: create,
// grow, configure, describe and delete a topic at each version.
func TestAdminAPIsEveryVersion(t *testing.T) {
	b := sharedBroker(t)
	conn := dial(t, b.Addr())
	defer conn.Close()
	var corr int32
	next := func() int32 { corr++; return corr }

	for v := int16(2); v <= 7; v++ {
		topic := topicName(t, "c")
		create := kmsg.NewPtrCreateTopicsRequest()
		create.Version, create.TimeoutMillis = v, 10000
		create.Topics = []kmsg.CreateTopicsRequestTopic{newTopic(topic, 1, 1)}
		cr := kmsg.NewPtrCreateTopicsResponse()
		roundTrip(t, conn, create, cr, next())
		if len(cr.Topics) != 1 || cr.Topics[0].ErrorCode != 0 {
			t.Fatalf("CreateTopics v%d: %+v", v, cr.Topics)
		}

		// Grow it at a CreatePartitions version in [0, 3].
		grow := kmsg.NewPtrCreatePartitionsRequest()
		grow.Version, grow.TimeoutMillis = (v-2)%4, 10000
		gt := kmsg.NewCreatePartitionsRequestTopic()
		gt.Topic, gt.Count = topic, 2
		grow.Topics = []kmsg.CreatePartitionsRequestTopic{gt}
		gr := kmsg.NewPtrCreatePartitionsResponse()
		roundTrip(t, conn, grow, gr, next())
		if len(gr.Topics) != 1 || gr.Topics[0].ErrorCode != 0 {
			t.Errorf("CreatePartitions v%d: %+v", grow.Version, gr.Topics)
		}

		// Configure it: IncrementalAlterConfigs v0/v1 and AlterConfigs v0-v2.
		inc := kmsg.NewPtrIncrementalAlterConfigsRequest()
		inc.Version = v % 2
		ir := kmsg.NewIncrementalAlterConfigsRequestResource()
		ir.ResourceType, ir.ResourceName = kmsg.ConfigResourceTypeTopic, topic
		ic := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		ic.Name, ic.Value = "retention.ms", kmsg.StringPtr("86400000")
		ir.Configs = append(ir.Configs, ic)
		inc.Resources = append(inc.Resources, ir)
		incr := kmsg.NewPtrIncrementalAlterConfigsResponse()
		roundTrip(t, conn, inc, incr, next())
		if len(incr.Resources) != 1 || incr.Resources[0].ErrorCode != 0 {
			t.Errorf("IncrementalAlterConfigs v%d: %+v", inc.Version, incr.Resources)
		}
		legacy := kmsg.NewPtrAlterConfigsRequest()
		legacy.Version = v % 3
		lr := kmsg.NewAlterConfigsRequestResource()
		lr.ResourceType, lr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
		lc := kmsg.NewAlterConfigsRequestResourceConfig()
		lc.Name, lc.Value = "retention.ms", kmsg.StringPtr("172800000")
		lr.Configs = append(lr.Configs, lc)
		legacy.Resources = append(legacy.Resources, lr)
		legr := kmsg.NewPtrAlterConfigsResponse()
		roundTrip(t, conn, legacy, legr, next())
		if len(legr.Resources) != 1 || legr.Resources[0].ErrorCode != 0 {
			t.Errorf("AlterConfigs v%d: %+v", legacy.Version, legr.Resources)
		}

		// Describe it at DescribeConfigs v1-v4 (Kafka applies the change
		// asynchronously, so wait for it).
		desc := kmsg.NewPtrDescribeConfigsRequest()
		desc.Version = 1 + (v-2)%4
		dr := kmsg.NewDescribeConfigsRequestResource()
		dr.ResourceType, dr.ResourceName, dr.ConfigNames = kmsg.ConfigResourceTypeTopic, topic, []string{"retention.ms"}
		desc.Resources = append(desc.Resources, dr)
		eventually(t, 5*time.Second, func() error {
			dresp := kmsg.NewPtrDescribeConfigsResponse()
			roundTrip(t, conn, desc, dresp, next())
			if len(dresp.Resources) != 1 || dresp.Resources[0].ErrorCode != 0 || len(dresp.Resources[0].Configs) != 1 ||
				deref(dresp.Resources[0].Configs[0].Value) != "172800000" {
				return fmt.Errorf("DescribeConfigs v%d after AlterConfigs v%d: %+v", desc.Version, legacy.Version, dresp.Resources)
			}
			return nil
		})

		// DescribeLogDirs v1-v4 lists its two partitions.
		logs := kmsg.NewPtrDescribeLogDirsRequest()
		logs.Version = 1 + (v-2)%4
		lt := kmsg.NewDescribeLogDirsRequestTopic()
		lt.Topic, lt.Partitions = topic, []int32{0, 1}
		logs.Topics = append(logs.Topics, lt)
		eventually(t, 5*time.Second, func() error {
			logr := kmsg.NewPtrDescribeLogDirsResponse()
			roundTrip(t, conn, logs, logr, next())
			if len(logr.Dirs) != 1 || len(logr.Dirs[0].Topics) != 1 || len(logr.Dirs[0].Topics[0].Partitions) != 2 {
				return fmt.Errorf("DescribeLogDirs v%d: %+v", logs.Version, logr.Dirs)
			}
			return nil
		})

		// Delete it at DeleteTopics v1-v6 (v6 names topics in Topics).
		del := kmsg.NewPtrDeleteTopicsRequest()
		del.Version, del.TimeoutMillis = v-1, 10000
		if del.Version >= 6 {
			dt := kmsg.NewDeleteTopicsRequestTopic()
			dt.Topic = kmsg.StringPtr(topic)
			del.Topics = append(del.Topics, dt)
		} else {
			del.TopicNames = []string{topic}
		}
		delr := kmsg.NewPtrDeleteTopicsResponse()
		roundTrip(t, conn, del, delr, next())
		if len(delr.Topics) != 1 || delr.Topics[0].ErrorCode != 0 {
			t.Errorf("DeleteTopics v%d: %+v", del.Version, delr.Topics)
		}
	}

	for v := int16(0); v <= 1; v++ {
		dc := kmsg.NewPtrDescribeClusterRequest()
		dc.Version = v
		dcr := kmsg.NewPtrDescribeClusterResponse()
		roundTrip(t, conn, dc, dcr, next())
		if dcr.ErrorCode != 0 || len(dcr.Brokers) != 1 || dcr.ClusterID == "" {
			t.Errorf("DescribeCluster v%d: %+v", v, dcr)
		}
	}
	for v := int16(0); v <= 4; v++ {
		av := kmsg.NewPtrApiVersionsRequest()
		av.Version = v
		av.ClientSoftwareName, av.ClientSoftwareVersion = "samsa-e2e", "1"
		avr := kmsg.NewPtrApiVersionsResponse()
		roundTrip(t, conn, av, avr, next())
		if avr.ErrorCode != 0 || len(avr.ApiKeys) < 10 {
			t.Errorf("ApiVersions v%d: error %d, %d keys", v, avr.ErrorCode, len(avr.ApiKeys))
		}
	}
	// ApiVersions v3+ names the client software; Kafka refuses names
	// outside [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])? with INVALID_REQUEST.
	bad := kmsg.NewPtrApiVersionsRequest()
	bad.Version = 3
	bad.ClientSoftwareName, bad.ClientSoftwareVersion = "bad name!", "1.0"
	badr := kmsg.NewPtrApiVersionsResponse()
	roundTrip(t, conn, bad, badr, next())
	if badr.ErrorCode != 42 {
		t.Errorf("ApiVersions v3 with client software name %q: error %d, want INVALID_REQUEST (42)", bad.ClientSoftwareName, badr.ErrorCode)
	}
}
