package api

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// syncBuffer is a log destination for one test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) lines(substr string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Count(w.b.String(), substr)
}

// callFindCoordinator runs one FindCoordinator through the handler and
// decodes the answer.
func callFindCoordinator(t *testing.T, s *Services, body *kmsg.FindCoordinatorRequest, clientID, addr string) *kmsg.FindCoordinatorResponse {
	t.Helper()
	var got *wire.Response
	handleFindCoordinator(s, &wire.Request{
		Header:     wire.RequestHeader{APIKey: body.Key(), APIVersion: body.Version, CorrelationID: 7, ClientID: clientID},
		ClientAddr: addr, Body: body, Reply: func(r *wire.Response) { got = r },
	})
	if got == nil {
		t.Fatal("no answer")
	}
	raw, err := got.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	resp := body.ResponseKind().(*kmsg.FindCoordinatorResponse)
	raw = raw[8:] // size, correlation id
	if resp.IsFlexible() {
		raw = raw[1:] // header tags
	}
	if err := resp.ReadFrom(raw); err != nil {
		t.Fatal(err)
	}
	return resp
}

// With transactions turned off (samsa.transactions.enable=false: the
// handler has no coordinators), a transaction coordinator lookup is
// refused with the code every client
// treats as fatal, at every version, with a message from v1 on; the
// refusal is logged once per client.
func TestFindCoordinatorRefusesTransactionsWhenOff(t *testing.T) {
	var out syncBuffer
	s := &Services{Env: &env.Env{Log: slog.New(slog.NewTextHandler(&out, nil))}}
	txnRefusals = refusalLog{seen: map[refusedClient]struct{}{}}
	for v := int16(0); v <= 6; v++ {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorType = v, coordinatorKeyTransaction
		req.CoordinatorKey, req.CoordinatorKeys = "tx", []string{"tx", "tx2"}
		resp := callFindCoordinator(t, s, req, "txn-client", "10.0.0.1:40000")
		if v < 4 {
			if kerr.Code(resp.ErrorCode) != kerr.TransactionalIDAuthorizationFailed || resp.NodeID != -1 {
				t.Errorf("v%d: %+v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", v, resp)
			}
			if v >= 1 && (resp.ErrorMessage == nil || !strings.Contains(*resp.ErrorMessage, "not supported")) {
				t.Errorf("v%d: message %v", v, resp.ErrorMessage)
			}
			continue
		}
		if len(resp.Coordinators) != 2 {
			t.Fatalf("v%d: %d coordinators for 2 keys", v, len(resp.Coordinators))
		}
		for i, c := range resp.Coordinators {
			if c.Key != req.CoordinatorKeys[i] || kerr.Code(c.ErrorCode) != kerr.TransactionalIDAuthorizationFailed ||
				c.NodeID != -1 || c.ErrorMessage == nil || !strings.Contains(*c.ErrorMessage, "not supported") {
				t.Errorf("v%d key %d: %+v", v, i, c)
			}
		}
	}
	// Same client from another port: still one line; another client id
	// or host: one more each.
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorType, req.CoordinatorKeys = 4, coordinatorKeyTransaction, []string{"tx"}
	callFindCoordinator(t, s, req, "txn-client", "10.0.0.1:40001")
	callFindCoordinator(t, s, req, "other", "10.0.0.1:40002")
	callFindCoordinator(t, s, req, "txn-client", "10.0.0.2:40000")
	if n := out.lines("transactional producer refused"); n != 3 {
		t.Errorf("%d refusal lines, want 3 (one per client):\n%s", n, out.b.String())
	}
	if !strings.Contains(out.b.String(), "client_id=txn-client") || !strings.Contains(out.b.String(), "client=10.0.0.1:40000") {
		t.Errorf("the line does not name the client:\n%s", out.b.String())
	}
}

// The set of clients logged is bounded: past maxRefusalsLogged one line
// says so, and later clients are neither logged nor remembered.
func TestTransactionRefusalLogBounded(t *testing.T) {
	var out syncBuffer
	s := &Services{Env: &env.Env{Log: slog.New(slog.NewTextHandler(&out, nil))}}
	l := &refusalLog{seen: map[refusedClient]struct{}{}}
	for i := range maxRefusalsLogged + 500 {
		req := &wire.Request{Header: wire.RequestHeader{ClientID: "c" + strconv.Itoa(i)}, ClientAddr: "10.0.0.9:1"}
		l.note(s, req, "tx")
	}
	if len(l.seen) != maxRefusalsLogged {
		t.Errorf("%d clients remembered, want %d", len(l.seen), maxRefusalsLogged)
	}
	if n := out.lines("transactional producer refused"); n != maxRefusalsLogged {
		t.Errorf("%d refusal lines, want %d", n, maxRefusalsLogged)
	}
	if n := out.lines("further refusals go unlogged"); n != 1 {
		t.Errorf("%d overflow lines, want 1", n)
	}
}
