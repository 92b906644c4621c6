package schemaregistry

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/testkit"
)

// TestSASLOnlyBroker: a broker whose only Kafka listener is
// SASL_PLAINTEXT still serves the registry, which logs in with the
// broker's own PLAIN identity from the JAAS entry; the REST proxy there
// wants credentials.
func TestSASLOnlyBroker(t *testing.T) {
	port, err := testkit.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	b := testkit.StartInProcess(t,
		"listeners", fmt.Sprintf("SASL_PLAINTEXT://127.0.0.1:%d", port),
		"sasl.enabled.mechanisms", "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config",
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";`,
		"samsa.http.listeners", "127.0.0.1:0")
	url := "http://" + b.Web.Addrs()[0].String()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := srClient(t, url)
	created, err := cl.CreateSchema(ctx, "secure-value", sr.Schema{Schema: customerSchema})
	if err != nil {
		t.Fatalf("registering on a SASL-only broker: %v", err)
	}
	got, err := cl.SchemaByID(ctx, created.ID)
	if err != nil || got.Schema != customerSchema {
		t.Errorf("SchemaByID = %+v, %v", got, err)
	}
	resp, err := http.Get(url + "/v3/clusters")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the REST proxy without credentials on a SASL-only broker = %d, want 401", resp.StatusCode)
	}
}
