package restproxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/testkit"
)

// proxy is an in-process broker with the HTTP listener on.
type proxy struct {
	*testkit.InProcess
	url string
}

func startProxy(t *testing.T) proxy {
	t.Helper()
	b := testkit.StartInProcess(t, "samsa.http.listeners", "127.0.0.1:0")
	return proxy{InProcess: b, url: "http://" + b.Web.Addrs()[0].String()}
}

// do sends one request and returns the status and body.
func do(t *testing.T, method, url, contentType, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// doJSON is do with the answer decoded into out (skipped when nil).
func doJSON(t *testing.T, method, url, contentType, body string, out any) int {
	t.Helper()
	code, b := do(t, method, url, contentType, body)
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s = %d %s: %v", method, url, code, b, err)
		}
	}
	return code
}

type errorBody struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

func clusterID(t *testing.T, p proxy) string {
	t.Helper()
	var clusters struct {
		Data []struct {
			ClusterID string `json:"cluster_id"`
		} `json:"data"`
	}
	if code := doJSON(t, "GET", p.url+"/v3/clusters", "", "", &clusters); code != 200 || len(clusters.Data) != 1 || clusters.Data[0].ClusterID == "" {
		t.Fatalf("GET /v3/clusters = %d %+v", code, clusters)
	}
	return clusters.Data[0].ClusterID
}

// createTopic creates a topic through POST /v3/clusters/{id}/topics and
// returns that topics URL.
func createTopic(t *testing.T, p proxy, name string, partitions int) string {
	t.Helper()
	topics := p.url + "/v3/clusters/" + clusterID(t, p) + "/topics"
	body := fmt.Sprintf(`{"topic_name":%q,"partitions_count":%d}`, name, partitions)
	if code, answer := do(t, "POST", topics, "application/json", body); code != 201 {
		t.Fatalf("creating %s = %d %s", name, code, answer)
	}
	return topics
}
