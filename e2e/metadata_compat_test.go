package e2e

import (
	"math/bits"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Issue #15's client-found defects, through franz-go against the binary:
// authorized operations, group configs, Kafka's dynamic broker configs.
func TestMetadataCompat(t *testing.T) {
	b := sharedBroker(t)
	cl := newClient(t, b.Addr())
	adm := kadm.NewClient(cl)
	meta, err := adm.BrokerMetadata(testContext(t))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("AuthorizedOperations", func(t *testing.T) {
		dc := kmsg.NewPtrDescribeClusterRequest()
		dc.IncludeClusterAuthorizedOperations = true
		resp, err := dc.RequestWith(testContext(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		if n := bits.OnesCount32(uint32(resp.ClusterAuthorizedOperations)); n != 7 {
			t.Errorf("cluster operations %b: %d, want 7", resp.ClusterAuthorizedOperations, n)
		}
		topic := topicName(t, "ops")
		mustCreate(t, adm, topic, 1, nil)
		mr := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = ptr(topic)
		mr.Topics = append(mr.Topics, rt)
		mr.IncludeTopicAuthorizedOperations = true
		mresp, err := mr.RequestWith(testContext(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		if len(mresp.Topics) != 1 || bits.OnesCount32(uint32(mresp.Topics[0].AuthorizedOperations)) != 8 {
			t.Errorf("topic operations %+v, want 8", mresp.Topics)
		}
	})

	t.Run("DynamicBrokerConfig", func(t *testing.T) {
		key := "sasl.kerberos.min.time.before.relogin"
		resps, err := adm.AlterBrokerConfigs(testContext(t), []kadm.AlterConfig{{Name: key, Value: ptr("120000")}}, meta.Controller)
		if err != nil || resps[0].Err != nil {
			t.Fatalf("alter %s: %v %+v", key, err, resps)
		}
		rcs, err := adm.DescribeBrokerConfigs(testContext(t), meta.Controller)
		if err != nil {
			t.Fatal(err)
		}
		wantConfig(t, rcs[0], key, "120000", kmsg.ConfigSourceDynamicBrokerConfig)
		resps, _ = adm.AlterBrokerConfigs(testContext(t), []kadm.AlterConfig{{Name: "log.dirs", Value: ptr("/elsewhere")}}, meta.Controller)
		wantKafkaError(t, "alter log.dirs", resps[0].Err, resps[0].ErrMessage, kerr.InvalidRequest, true)
		// Leave the shared broker as it was.
		if _, err := adm.AlterBrokerConfigs(testContext(t), []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: key}}, meta.Controller); err != nil {
			t.Errorf("restoring %s: %v", key, err)
		}
	})

	t.Run("GroupConfigs", func(t *testing.T) {
		group := topicName(t, "group")
		ia := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = "consumer.heartbeat.interval.ms", ptr("6000")
		r.Configs = append(r.Configs, c)
		ia.Resources = append(ia.Resources, r)
		iresp, err := ia.RequestWith(testContext(t), cl)
		if err != nil || iresp.Resources[0].ErrorCode != 0 {
			t.Fatalf("alter group config: %v %+v", err, iresp)
		}
		dc := kmsg.NewPtrDescribeConfigsRequest()
		dr := kmsg.NewDescribeConfigsRequestResource()
		dr.ResourceType, dr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
		dc.Resources = append(dc.Resources, dr)
		dresp, err := dc.RequestWith(testContext(t), cl)
		if err != nil || dresp.Resources[0].ErrorCode != 0 {
			t.Fatalf("describe group configs: %v %+v", err, dresp)
		}
		got := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
		for _, c := range dresp.Resources[0].Configs {
			got[c.Name] = c
		}
		if c := got["consumer.heartbeat.interval.ms"]; deref(c.Value) != "6000" || c.Source != kmsg.ConfigSourceGroupConfig {
			t.Errorf("consumer.heartbeat.interval.ms %+v", c)
		}
		if c := got["consumer.session.timeout.ms"]; deref(c.Value) != "45000" || c.Source != kmsg.ConfigSourceDefaultConfig {
			t.Errorf("consumer.session.timeout.ms %+v", c)
		}
	})
}
