package restproxy

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

type topicBody struct {
	Kind              string `json:"kind"`
	TopicName         string `json:"topic_name"`
	PartitionsCount   int    `json:"partitions_count"`
	ReplicationFactor int    `json:"replication_factor"`
}

// TestV3Topics creates, lists, reads and deletes a topic through the v3
// API and checks each against what the broker says.
func TestV3Topics(t *testing.T) {
	p := startProxy(t)
	id := clusterID(t, p)
	topics := p.url + "/v3/clusters/" + id + "/topics"

	var created topicBody
	code := doJSON(t, "POST", topics, "application/json",
		`{"topic_name":"orders","partitions_count":3,"replication_factor":1,"configs":[{"name":"cleanup.policy","value":"compact"}]}`, &created)
	if code != 201 || created.TopicName != "orders" || created.PartitionsCount != 3 || created.ReplicationFactor != 1 {
		t.Fatalf("create = %d %+v", code, created)
	}
	adm, _ := p.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfgs, err := adm.DescribeTopicConfigs(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := cfgs.On("orders", nil); err != nil || !hasConfig(c.Configs, "cleanup.policy", "compact") {
		t.Errorf("the broker's orders configs = %+v, %v; want cleanup.policy=compact", c, err)
	}

	var dup errorBody
	if code := doJSON(t, "POST", topics, "application/json", `{"topic_name":"orders","partitions_count":1}`, &dup); code != 400 || dup.ErrorCode != 40002 {
		t.Errorf("creating it again = %d %+v, want 400 error_code 40002", code, dup)
	}
	var listed struct {
		Kind string      `json:"kind"`
		Data []topicBody `json:"data"`
	}
	if code := doJSON(t, "GET", topics, "", "", &listed); code != 200 || listed.Kind != "KafkaTopicList" || !containsTopic(listed.Data, "orders") {
		t.Errorf("list = %d %+v", code, listed)
	}
	var one topicBody
	if code := doJSON(t, "GET", topics+"/orders", "", "", &one); code != 200 || one.PartitionsCount != 3 {
		t.Errorf("get = %d %+v", code, one)
	}
	var parts struct {
		Data []struct {
			PartitionID int `json:"partition_id"`
			Leader      *struct {
				Related string `json:"related"`
			} `json:"leader"`
		} `json:"data"`
	}
	if code := doJSON(t, "GET", topics+"/orders/partitions", "", "", &parts); code != 200 || len(parts.Data) != 3 || parts.Data[2].PartitionID != 2 || parts.Data[0].Leader == nil {
		t.Errorf("partitions = %d %+v", code, parts)
	}
	var missing errorBody
	if code := doJSON(t, "GET", topics+"/nope", "", "", &missing); code != 404 || missing.ErrorCode != 404 {
		t.Errorf("unknown topic = %d %+v", code, missing)
	}
	if code := doJSON(t, "GET", p.url+"/v3/clusters/not-this-one/topics", "", "", &missing); code != 404 {
		t.Errorf("unknown cluster = %d %+v", code, missing)
	}
	if code, body := do(t, "DELETE", topics+"/orders", "", ""); code != 204 {
		t.Fatalf("delete = %d %s", code, body)
	}
	for {
		md, err := adm.Metadata(ctx, "orders")
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := md.Topics["orders"]; !ok || d.Err != nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("orders still exists after DELETE")
		}
	}
}

func containsTopic(ts []topicBody, name string) bool {
	for _, t := range ts {
		if t.TopicName == name {
			return true
		}
	}
	return false
}

func hasConfig(cs []kadm.Config, key, value string) bool {
	for _, c := range cs {
		if c.Key == key && c.Value != nil && *c.Value == value {
			return true
		}
	}
	return false
}
