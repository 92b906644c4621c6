package console

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// fetch GETs path and returns the status and body.
func fetch(t *testing.T, cl *http.Client, b *consoleBroker, path string) (int, string) {
	t.Helper()
	resp, err := cl.Get(b.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// post sends a form as a browser of the console would, with the page's
// CSRF token unless form sets its own.
func post(t *testing.T, cl *http.Client, b *consoleBroker, path string, form url.Values, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// token loads path and returns the CSRF token of its forms.
func token(t *testing.T, cl *http.Client, b *consoleBroker, path string) string {
	t.Helper()
	_, body := fetch(t, cl, b, path)
	m := csrfInput.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("%s has no CSRF token in its forms", path)
	}
	return m[1]
}

func topicExists(t *testing.T, b *consoleBroker, name string) bool {
	t.Helper()
	td, err := b.admin(t).ListTopics(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return td[name].Err == nil && len(td[name].Partitions) > 0
}

// TestMutationsNeedTheConsolesToken: a create-topic POST without the
// browser's token, with a wrong one, or from another origin is refused
// with 403 and creates nothing; with the token from the console's own
// page it works.
func TestMutationsNeedTheConsolesToken(t *testing.T) {
	b := startBroker(t)
	cl := httpClient(t)
	tok := token(t, cl, b, "/topics")
	for _, c := range []struct {
		name    string
		form    url.Values
		headers map[string]string
	}{
		{"no token", url.Values{"name": {"csrf-a"}}, nil},
		{"wrong token", url.Values{"name": {"csrf-b"}, "csrf": {strings.Repeat("x", 43)}}, nil},
		{"other origin", url.Values{"name": {"csrf-c"}, "csrf": {tok}}, map[string]string{"Origin": "http://evil.example"}},
		{"cross-site fetch", url.Values{"name": {"csrf-d"}, "csrf": {tok}}, map[string]string{"Sec-Fetch-Site": "cross-site"}},
	} {
		resp, body := post(t, cl, b, "/topics", c.form, c.headers)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `id="error"`) {
			t.Errorf("%s: %d, want 403 with the error page", c.name, resp.StatusCode)
		}
		if topicExists(t, b, c.form.Get("name")) {
			t.Errorf("%s: topic %s was created", c.name, c.form.Get("name"))
		}
	}
	resp, _ := post(t, cl, b, "/topics", url.Values{"name": {"csrf-ok"}, "partitions": {"2"}, "csrf": {tok}}, map[string]string{"Origin": b.base})
	if resp.StatusCode != http.StatusSeeOther || !topicExists(t, b, "csrf-ok") {
		t.Fatalf("with the token: %d, topic exists %v", resp.StatusCode, topicExists(t, b, "csrf-ok"))
	}
}

// TestBadInputGetsAClearErrorPage: what the cluster refuses comes back
// as a page naming Kafka's error, with a 4xx status, and the console
// keeps serving.
func TestBadInputGetsAClearErrorPage(t *testing.T) {
	b := startBroker(t)
	cl := httpClient(t)
	tok := token(t, cl, b, "/topics")
	resp, body := post(t, cl, b, "/topics", url.Values{"name": {"bad/name"}, "csrf": {tok}}, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, kerr.InvalidTopicException.Message) {
		t.Errorf("creating bad/name: %d, body lacks %s", resp.StatusCode, kerr.InvalidTopicException.Message)
	}
	resp, body = post(t, cl, b, "/topics", url.Values{"name": {"x"}, "partitions": {"many"}, "csrf": {tok}}, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "whole number") {
		t.Errorf("partitions=many: %d %q", resp.StatusCode, body)
	}
	if status, body := fetch(t, cl, b, "/topics/nope"); status != http.StatusNotFound || !strings.Contains(body, "No such topic") {
		t.Errorf("/topics/nope: %d", status)
	}
	if status, _ := fetch(t, cl, b, "/topics/nope/messages?partition=x"); status != http.StatusBadRequest {
		t.Errorf("partition=x: %d, want 400", status)
	}
	if status, _ := fetch(t, cl, b, "/"); status != http.StatusOK {
		t.Errorf("the cluster page after bad input: %d", status)
	}
	if status, body := fetch(t, cl, b, "/security"); status != http.StatusOK || !strings.Contains(body, "ACLs are off") {
		t.Errorf("/security without an authorizer: %d, want 200 saying ACLs are off", status)
	}
}

// TestReadOnlyConsole: with samsa.console.read.only the forms are gone
// and a mutation sent anyway is refused with 403, changing nothing.
func TestReadOnlyConsole(t *testing.T) {
	b := startBroker(t, "samsa.console.read.only", "true")
	cl := httpClient(t)
	status, body := fetch(t, cl, b, "/topics")
	if status != http.StatusOK || !strings.Contains(body, `id="read-only"`) || strings.Contains(body, `id="create-topic"`) {
		t.Errorf("read-only topics page: %d, badge/form wrong", status)
	}
	tok := csrfInput.FindStringSubmatch(body)
	form := url.Values{"name": {"ro"}}
	if tok != nil {
		form.Set("csrf", tok[1])
	}
	resp, body := post(t, cl, b, "/topics", form, nil)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "Read-only console") {
		t.Errorf("create in read-only mode: %d", resp.StatusCode)
	}
	if topicExists(t, b, "ro") {
		t.Error("read-only console created a topic")
	}
}

const plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`

// TestSignInWithSASLUsers: on a SASL listener the console asks who is
// there, accepts only the broker's users, and runs as the user: with an
// authorizer, alice (no ACLs) cannot create a topic through it while
// admin (a super user) can.
func TestSignInWithSASLUsers(t *testing.T) {
	b := startBroker(t,
		"listeners", "SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms", "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config", plainJAAS,
		"authorizer.class.name", "kafka.security.authorizer.AclAuthorizer", "super.users", "User:admin")
	signIn := func(user, pass string) (*http.Client, *http.Response) {
		cl := httpClient(t)
		status, _ := fetch(t, cl, b, "/topics")
		if status != http.StatusSeeOther {
			t.Fatalf("/topics before signing in: %d, want a redirect to /login", status)
		}
		_, body := fetch(t, cl, b, "/login?next=/topics")
		m := csrfInput.FindStringSubmatch(body)
		if m == nil {
			t.Fatal("the sign-in page has no CSRF token")
		}
		resp, _ := post(t, cl, b, "/login", url.Values{"user": {user}, "password": {pass}, "next": {"/topics"}, "csrf": {m[1]}}, nil)
		return cl, resp
	}
	if _, resp := signIn("alice", "wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong password: %d, want 401", resp.StatusCode)
	}
	alice, resp := signIn("alice", "alice-secret")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/topics" {
		t.Fatalf("alice signs in: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	status, body := fetch(t, alice, b, "/topics")
	if status != http.StatusOK || !strings.Contains(body, `<b id="user">alice</b>`) {
		t.Fatalf("alice's topics page: %d", status)
	}
	resp, body = post(t, alice, b, "/topics", url.Values{"name": {"alices"}, "csrf": {csrfInput.FindStringSubmatch(body)[1]}}, nil)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, kerr.TopicAuthorizationFailed.Message) {
		t.Errorf("alice creates a topic without ACLs: %d, want 403 %s", resp.StatusCode, kerr.TopicAuthorizationFailed.Message)
	}
	admin, _ := signIn("admin", "admin-secret")
	resp, _ = post(t, admin, b, "/topics", url.Values{"name": {"admins"}, "csrf": {token(t, admin, b, "/topics")}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("admin creates a topic: %d", resp.StatusCode)
	}
	adm := kadm.NewClient(b.client(t, kgo.SASL(plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism())))
	td, err := adm.ListTopics(context.Background(), "admins", "alices")
	if err != nil {
		t.Fatal(err)
	}
	if td["admins"].Err != nil || td["alices"].Err == nil {
		t.Errorf("after the console: admins %v, alices %v; want admins made, alices not", td["admins"].Err, td["alices"].Err)
	}
	// The security page lists ACLs and quotas as the cluster has them.
	if _, err := adm.CreateACLs(context.Background(), kadm.NewACLs().Allow("User:alice").Topics("admins").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral)); err != nil {
		t.Fatal(err)
	}
	alice2 := "alice"
	if _, err := adm.AlterClientQuotas(context.Background(), []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "user", Name: &alice2}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1024}}}}); err != nil {
		t.Fatal(err)
	}
	status, body = fetch(t, admin, b, "/security")
	for _, want := range []string{"<td>User:alice</td>", "<td>READ</td>", "<td>admins</td>", "user=alice", "producer_byte_rate=1024"} {
		if status != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("/security (%d) lacks %q", status, want)
		}
	}
	// Signing out ends the session: the old cookie no longer opens pages.
	resp, _ = post(t, alice, b, "/logout", url.Values{"csrf": {token(t, alice, b, "/topics")}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("sign out: %d", resp.StatusCode)
	}
	if status, _ := fetch(t, alice, b, "/topics"); status != http.StatusSeeOther {
		t.Errorf("after signing out /topics is %d, want a redirect to /login", status)
	}
}
