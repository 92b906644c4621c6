package interbroker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// answer is one callback's arguments.
type answer struct {
	name string // the Metadata request's topic
	resp kmsg.Response
	err  error
}

// answers collects callbacks in the order they are called.
type answers chan answer

func (a answers) callback(name string) func(kmsg.Response, error) {
	return func(resp kmsg.Response, err error) { a <- answer{name: name, resp: resp, err: err} }
}

func (a answers) next(t *testing.T) answer {
	t.Helper()
	select {
	case r := <-a:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no callback")
		return answer{}
	}
}

// newChannel returns a Channel over a new Client, both closed when t
// ends, retrying quickly.
func newChannel(t *testing.T, cfg Config) *Channel {
	t.Helper()
	c := newClient(t, cfg)
	ch := NewChannel(c, ChannelConfig{Backoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond})
	t.Cleanup(ch.Close) // runs before the Client's Close
	return ch
}

func topicOf(r received) string {
	if m, ok := r.body.(*kmsg.MetadataRequest); ok && len(m.Topics) == 1 {
		return *m.Topics[0].Topic
	}
	return ""
}

func TestChannelSendsInOrderOneAtATime(t *testing.T) {
	noLeaks(t)
	p := startPeer(t)
	var answered atomic.Int32
	violations := make(chan string, 100)
	p.set(func(p *fakePeer) {
		p.handle = func(r received) kmsg.Response {
			// Request k reaches the peer only after request k-1's
			// callback: one at a time, not merely in order.
			if want := fmt.Sprintf("m%d", answered.Load()); topicOf(r) != want {
				violations <- fmt.Sprintf("peer read %s while %s was due", topicOf(r), want)
			}
			return echo(r)
		}
	})
	ch := newChannel(t, Config{})
	ch.AddBroker(1, p.addr)
	got := make(answers, 100)
	const n = 50
	for i := range n {
		name := fmt.Sprintf("m%d", i)
		ch.Enqueue(1, metadataReq(name), func(resp kmsg.Response, err error) {
			answered.Add(1)
			got.callback(name)(resp, err)
		})
	}
	for i := range n {
		a := got.next(t)
		if a.err != nil {
			t.Fatal(a.err)
		}
		want := fmt.Sprintf("m%d", i)
		if m := a.resp.(*kmsg.MetadataResponse); a.name != want || *m.Topics[0].Topic != want {
			t.Fatalf("callback %d: %s with %s's response, want %s", i, a.name, *m.Topics[0].Topic, want)
		}
	}
	close(violations)
	for v := range violations {
		t.Error(v)
	}
}

func TestChannelRetriesOnConnectionLoss(t *testing.T) {
	noLeaks(t)
	p := startPeer(t)
	var drops atomic.Int32
	p.set(func(p *fakePeer) {
		p.handle = func(r received) kmsg.Response {
			if topicOf(r) == "flaky" && drops.Add(1) <= 3 {
				return nil // closes the connection without an answer
			}
			return echo(r)
		}
	})
	ch := newChannel(t, Config{})
	ch.AddBroker(1, p.addr)
	got := make(answers, 2)
	ch.Enqueue(1, metadataReq("flaky"), got.callback("flaky"))
	ch.Enqueue(1, metadataReq("after"), got.callback("after"))
	for _, want := range []string{"flaky", "after"} {
		if a := got.next(t); a.name != want || a.err != nil {
			t.Fatalf("%s: %v, want %s answered", a.name, a.err, want)
		}
	}
	if n := drops.Load(); n != 4 {
		t.Fatalf("flaky sent %d times, want 4", n)
	}
	if n := handshakes(p); n != 4 {
		t.Fatalf("%d connections, want 4", n)
	}
}

func TestChannelRetriesUntilTheBrokerIsReachable(t *testing.T) {
	noLeaks(t)
	p := startPeer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nowhere := ln.Addr().String()
	ln.Close()
	dials := make(chan string, 100)
	ch := newChannel(t, Config{Dial: func(ctx context.Context, addr string) (net.Conn, error) {
		dials <- addr
		return defaultDial(ctx, addr)
	}})
	ch.AddBroker(1, nowhere)
	got := make(answers, 1)
	ch.Enqueue(1, metadataReq("x"), got.callback("x"))
	for range 3 { // fails, retries, fails again
		if addr := <-dials; addr != nowhere {
			t.Fatalf("dialled %s", addr)
		}
	}
	ch.AddBroker(1, p.addr) // the broker came back elsewhere
	if a := got.next(t); a.err != nil {
		t.Fatal(a.err)
	}
}

func TestChannelRemoveBrokerFailsWhatIsQueued(t *testing.T) {
	noLeaks(t)
	p := startPeer(t)
	p.set(func(p *fakePeer) {
		p.handle = func(received) kmsg.Response { <-p.stop; return nil } // never answers
	})
	ch := newChannel(t, Config{})
	ch.AddBroker(1, p.addr)
	got := make(answers, 10)
	for i := range 5 {
		ch.Enqueue(1, metadataReq(fmt.Sprint(i)), got.callback(fmt.Sprint(i)))
	}
	next(t, p)
	if r := next(t, p); topicOf(r) != "0" {
		t.Fatalf("first request %q", topicOf(r))
	}
	ch.RemoveBroker(1)
	for i := range 5 {
		a := got.next(t)
		if a.name != fmt.Sprint(i) || !errors.Is(a.err, ErrRemoved) {
			t.Fatalf("callback %d: %s %v, want %d ErrRemoved", i, a.name, a.err, i)
		}
	}
	ch.Enqueue(1, metadataReq("late"), got.callback("late"))
	if a := got.next(t); !errors.Is(a.err, ErrRemoved) {
		t.Fatalf("enqueued after removal: %v", a.err)
	}
	ch.RemoveBroker(1) // again: nothing
}

func TestChannelRemoveBrokerStopsTheRetries(t *testing.T) {
	noLeaks(t)
	dials := make(chan struct{}, 100)
	refused := errors.New("refused")
	ch := newChannel(t, Config{Dial: func(context.Context, string) (net.Conn, error) {
		dials <- struct{}{}
		return nil, refused
	}})
	ch.AddBroker(1, "broker-1:9092")
	got := make(answers, 1)
	ch.Enqueue(1, metadataReq("x"), got.callback("x"))
	<-dials
	<-dials // retrying
	ch.RemoveBroker(1)
	if a := got.next(t); !errors.Is(a.err, ErrRemoved) {
		t.Fatalf("%v, want ErrRemoved", a.err)
	}
}

func TestChannelPassesOtherErrorsOn(t *testing.T) {
	noLeaks(t)
	p := startPeer(t)
	p.set(func(p *fakePeer) { p.setAPI(6, 1, 0) }) // no UpdateMetadata
	ch := newChannel(t, Config{})
	ch.AddBroker(1, p.addr)
	got := make(answers, 2)
	ch.Enqueue(1, kmsg.NewPtrUpdateMetadataRequest(), got.callback("um"))
	ch.Enqueue(1, metadataReq("md"), got.callback("md"))
	if a := got.next(t); a.name != "um" || !errors.Is(a.err, ErrUnsupported) {
		t.Fatalf("%s: %v, want ErrUnsupported", a.name, a.err)
	}
	if a := got.next(t); a.name != "md" || a.err != nil {
		t.Fatalf("%s: %v", a.name, a.err)
	}
}

func TestChannelClose(t *testing.T) {
	noLeaks(t)
	p := startPeer(t)
	p.set(func(p *fakePeer) {
		p.handle = func(received) kmsg.Response { <-p.stop; return nil }
	})
	c := newClient(t, Config{})
	ch := NewChannel(c, ChannelConfig{})
	ch.AddBroker(1, p.addr)
	ch.AddBroker(2, p.addr)
	var mu sync.Mutex
	var errs []error
	record := func(_ kmsg.Response, err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for range 3 {
		ch.Enqueue(1, metadataReq("a"), record)
		ch.Enqueue(2, metadataReq("b"), record)
	}
	ch.Enqueue(2, metadataReq("b"), nil) // a nil callback is allowed
	ch.Close()                           // waits for the callbacks
	mu.Lock()
	if len(errs) != 6 {
		t.Fatalf("%d callbacks, want 6", len(errs))
	}
	for _, err := range errs {
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("%v, want ErrClosed", err)
		}
	}
	mu.Unlock()
	got := make(answers, 1)
	ch.AddBroker(3, p.addr) // ignored
	ch.Enqueue(3, metadataReq("c"), got.callback("c"))
	if a := got.next(t); !errors.Is(a.err, ErrClosed) {
		t.Fatalf("after Close: %v", a.err)
	}
	ch.Close()
}
