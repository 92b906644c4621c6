package restproxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/samsa-io/samsa/testkit"
)

// plainUsers is Kafka's inline JAAS for PLAIN with admin and alice.
const plainUsers = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`

// asUser sends a request with HTTP Basic credentials ("" user: none).
func asUser(t *testing.T, user, pass, method, url, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestAuthenticatedAsSASLUsers: with a SASL listener, the proxy acts as
// the request's HTTP Basic user, so the broker's authentication and
// ACLs decide: anonymous requests (the PLAINTEXT listener, no ACLs) are
// refused with 403, a wrong password gets 401, alice may write only
// once admin granted it, and a consumer instance is its creator's.
func TestAuthenticatedAsSASLUsers(t *testing.T) {
	ports := [2]int{}
	for i := range ports {
		p, err := testkit.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = p
	}
	b := testkit.StartInProcess(t,
		"listeners", fmt.Sprintf("SASL_PLAINTEXT://127.0.0.1:%d,PLAINTEXT://127.0.0.1:%d", ports[0], ports[1]),
		"sasl.enabled.mechanisms", "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config", plainUsers,
		"authorizer.class.name", "kafka.security.authorizer.AclAuthorizer",
		"super.users", "User:admin",
		"samsa.http.listeners", "127.0.0.1:0")
	url := "http://" + b.Web.Addrs()[0].String()
	code, _, body := asUser(t, "admin", "admin-secret", "GET", url+"/v3/clusters", "")
	if code != 200 {
		t.Fatalf("admin GET /v3/clusters = %d %s", code, body)
	}
	id := body[strings.Index(body, `"cluster_id":"`)+len(`"cluster_id":"`):]
	id = id[:strings.Index(id, `"`)]
	topics := url + "/v3/clusters/" + id + "/topics"

	if code, _, body := asUser(t, "", "", "POST", topics, `{"topic_name":"secured","partitions_count":1}`); code != 403 || !strings.Contains(body, `"error_code":40301`) {
		t.Errorf("anonymous create = %d %s, want 403 error_code 40301", code, body)
	}
	if code, hdr, body := asUser(t, "admin", "wrong", "GET", topics, ""); code != 401 || !strings.Contains(body, `"error_code":40101`) || hdr.Get("WWW-Authenticate") == "" {
		t.Errorf("a wrong password = %d %s (WWW-Authenticate %q), want 401 error_code 40101", code, body, hdr.Get("WWW-Authenticate"))
	}
	if code, _, body := asUser(t, "admin", "admin-secret", "POST", topics, `{"topic_name":"secured","partitions_count":1}`); code != 201 {
		t.Fatalf("admin create = %d %s", code, body)
	}
	record := `{"value":{"type":"STRING","data":"from alice"}}`
	if code, _, body := asUser(t, "alice", "alice-secret", "POST", topics+"/secured/records", record); code != 403 {
		t.Errorf("alice producing without an ACL = %d %s, want 403", code, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := kadm.NewClient(b.Client(t, kgo.SASL(plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism())))
	acl := kadm.NewACLs().Allow("User:alice").Topics("secured").Operations(kadm.OpWrite, kadm.OpDescribe, kadm.OpRead).
		ResourcePatternType(kadm.ACLPatternLiteral)
	if res, err := admin.CreateACLs(ctx, acl); err != nil || res[0].Err != nil {
		t.Fatalf("granting alice: %v %+v", err, res)
	}
	groupACL := kadm.NewACLs().Allow("User:alice").Groups("alice-group").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral)
	if res, err := admin.CreateACLs(ctx, groupACL); err != nil || res[0].Err != nil {
		t.Fatalf("granting alice her group: %v %+v", err, res)
	}
	// ACLs reach the authorizer asynchronously: poll until alice may.
	for {
		code, _, body = asUser(t, "alice", "alice-secret", "POST", topics+"/secured/records", record)
		if code == 200 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("alice producing with the ACL = %d %s", code, body)
		case <-time.After(50 * time.Millisecond):
		}
	}

	// alice's consumer instance is hers alone.
	if code, _, body := asUser(t, "alice", "alice-secret", "POST", url+"/consumers/alice-group", `{"name":"a","format":"binary","auto.offset.reset":"earliest"}`); code != 200 {
		t.Fatalf("alice creating a consumer = %d %s", code, body)
	}
	if code, _, body := asUser(t, "", "", "POST", url+"/consumers/alice-group/instances/a/subscription", `{"topics":["secured"]}`); code != 404 {
		t.Errorf("anonymous using alice's instance = %d %s, want 404", code, body)
	}
	if code, _, body := asUser(t, "alice", "alice-secret", "POST", url+"/consumers/alice-group/instances/a/subscription", `{"topics":["secured"]}`); code != 204 {
		t.Fatalf("alice subscribing = %d %s", code, body)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _, body := asUser(t, "alice", "alice-secret", "GET", url+"/consumers/alice-group/instances/a/records?timeout=500", "")
		if code != 200 {
			t.Fatalf("alice fetching = %d %s", code, body)
		}
		if strings.Contains(body, `"offset":0`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice never read her record: %s", body)
		}
	}
}
