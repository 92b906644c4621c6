package actors_test

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/testkit"
	"github.com/samsa-io/samsa/wire"
)

// roundTrip sends req at exactly its version on a raw connection and
// decodes the answer, so old versions that real clients pin are tested
// without a client's negotiation in the way.
func roundTrip(t *testing.T, addr string, req kmsg.Request) kmsg.Response {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("versions-test")).AppendRequest(nil, req, 42)
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatalf("%s v%d: no response: %v", wire.APIName(req.Key()), req.GetVersion(), err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	if corr := int32(binary.BigEndian.Uint32(body)); corr != 42 {
		t.Fatalf("correlation id %d", corr)
	}
	body = body[4:]
	resp := req.ResponseKind()
	if resp.IsFlexible() && req.Key() != int16(kmsg.ApiVersions) {
		r := kbin.Reader{Src: body}
		kmsg.SkipTags(&r)
		body = r.Src
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("%s v%d: decode response: %v", wire.APIName(req.Key()), req.GetVersion(), err)
	}
	return resp
}

func TestOldAndNewVersions(t *testing.T) {
	n := testkit.StartInProcess(t)
	row := func(key kmsg.Key) wire.APIRange { r, _ := wire.LookupAPI(int16(key)); return r }

	for v := row(kmsg.CreateTopics).Accept; v <= row(kmsg.CreateTopics).Max; v++ {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = v
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "v"+string(rune('a'+v)), 2, 1
		req.Topics = append(req.Topics, rt)
		resp := roundTrip(t, n.Addr, req).(*kmsg.CreateTopicsResponse)
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("CreateTopics v%d: %+v", v, resp.Topics)
		}
	}
	for v := row(kmsg.Metadata).Accept; v <= row(kmsg.Metadata).Max; v++ {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = v
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("va")
		req.Topics = append(req.Topics, rt)
		resp := roundTrip(t, n.Addr, req).(*kmsg.MetadataResponse)
		if len(resp.Brokers) != 1 || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) != 2 {
			t.Fatalf("Metadata v%d: %+v", v, resp)
		}
		if v >= 10 && resp.Topics[0].TopicID == [16]byte{} {
			t.Fatalf("Metadata v%d: no topic id", v)
		}
	}
	for v := row(kmsg.DescribeConfigs).Accept; v <= row(kmsg.DescribeConfigs).Max; v++ {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.Version = v
		res := kmsg.NewDescribeConfigsRequestResource()
		res.ResourceType, res.ResourceName, res.ConfigNames = kmsg.ConfigResourceTypeTopic, "va", []string{"retention.ms"}
		req.Resources = append(req.Resources, res)
		resp := roundTrip(t, n.Addr, req).(*kmsg.DescribeConfigsResponse)
		if len(resp.Resources) != 1 || len(resp.Resources[0].Configs) != 1 || *resp.Resources[0].Configs[0].Value != "604800000" {
			t.Fatalf("DescribeConfigs v%d: %+v", v, resp)
		}
		if v == 0 && !resp.Resources[0].Configs[0].IsDefault {
			t.Fatalf("DescribeConfigs v0: IsDefault not set")
		}
	}
	for v := row(kmsg.DescribeLogDirs).Accept; v <= row(kmsg.DescribeLogDirs).Max; v++ {
		req := kmsg.NewPtrDescribeLogDirsRequest()
		req.Version = v
		resp := roundTrip(t, n.Addr, req).(*kmsg.DescribeLogDirsResponse)
		if len(resp.Dirs) != 1 || len(resp.Dirs[0].Topics) == 0 {
			t.Fatalf("DescribeLogDirs v%d: %+v", v, resp)
		}
	}
	for v := row(kmsg.DeleteTopics).Accept; v <= row(kmsg.DeleteTopics).Max; v++ {
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.Version = v
		name := "v" + string(rune('a'+v))
		if v >= 6 {
			req.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: kmsg.StringPtr(name)}}
		} else {
			req.TopicNames = []string{name}
		}
		resp := roundTrip(t, n.Addr, req).(*kmsg.DeleteTopicsResponse)
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("DeleteTopics v%d: %+v", v, resp.Topics)
		}
	}
	for v := row(kmsg.DescribeCluster).Accept; v <= row(kmsg.DescribeCluster).Max; v++ {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.Version = v
		resp := roundTrip(t, n.Addr, req).(*kmsg.DescribeClusterResponse)
		if resp.ErrorCode != 0 || len(resp.Brokers) != 1 {
			t.Fatalf("DescribeCluster v%d: %+v", v, resp)
		}
	}
}
