package schemaregistry

import (
	"encoding/json"
	"os/exec"
	"testing"
)

// TestSeedCurlExample runs the example as it is written, against
// the broker's HTTP listener instead of 127.0.0.1:8081 (the port is free
// one), and expects an id back.
func TestSeedCurlExample(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	b := startBroker(t)
	out, err := exec.Command(curl, "-sS", "-X", "POST", "-H", "Content-Type: application/vnd.schemaregistry.v1+json",
		"--data", `{"schema": "{\"type\": \"record\", \"name\": \"Customer\", \"fields\": [{\"name\": \"customerName\", \"type\": \"string\"}, {\"name\":\"customerId\",\"type\":\"int\"}]}"}`,
		b.URL()+"/subjects/avro-stream-value/versions").CombinedOutput()
	if err != nil {
		t.Fatalf("curl: %v\n%s", err, out)
	}
	var resp struct {
		ID *int `json:"id"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || resp.ID == nil || *resp.ID <= 0 {
		t.Fatalf("the seed's POST answered %s (%v), want {\"id\":N}", out, err)
	}
	// The id names the schema: GET /schemas/ids/{id} returns it.
	out, err = exec.Command(curl, "-sS", b.URL()+"/schemas/ids/"+itoa(*resp.ID)).CombinedOutput()
	if err != nil {
		t.Fatalf("curl: %v\n%s", err, out)
	}
	var schema struct{ Schema string }
	if err := json.Unmarshal(out, &schema); err != nil || schema.Schema == "" {
		t.Errorf("GET /schemas/ids/%d = %s (%v)", *resp.ID, out, err)
	}
}
