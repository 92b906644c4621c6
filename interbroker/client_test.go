package interbroker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
)

// current returns addr's connection.
func (c *Client) current(addr string) *conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conns[addr]
}

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c := New(cfg)
	t.Cleanup(c.Close)
	return c
}

// next returns the peer's next request, skipping none.
func next(t *testing.T, p *fakePeer) received {
	t.Helper()
	select {
	case r := <-p.got:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the peer received nothing")
		return received{}
	}
}

// handshakes drains what the peer has received so far and counts the
// ApiVersions requests: one per connection the client opened. Every Send
// has returned, so everything sent has been read.
func handshakes(p *fakePeer) int {
	var n int
	for len(p.got) > 0 {
		if r := <-p.got; r.key == wire.KeyApiVersions {
			n++
		}
	}
	return n
}

func metadataReq(topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	for _, tp := range topics {
		req.Topics = append(req.Topics, kmsg.MetadataRequestTopic{Topic: kmsg.StringPtr(tp)})
	}
	return req
}

func TestSendNegotiatesVersionAndHeader(t *testing.T) {
	noLeaks(t)
	p := startPeer(t)
	c := newClient(t, Config{ClientID: "samsa-broker-7"})
	ctx := context.Background()

	// UpdateMetadata v8 is flexible (request header v2), Metadata v12 too;
	// a peer that knows less than kmsg picks the version.
	resp, err := c.Send(ctx, p.addr, kmsg.NewPtrUpdateMetadataRequest())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := resp.(*kmsg.UpdateMetadataResponse); !ok || resp.GetVersion() != 8 {
		t.Fatalf("response %T v%d, want UpdateMetadata v8", resp, resp.GetVersion())
	}
	hs := next(t, p)
	if hs.key != wire.KeyApiVersions || hs.version != 3 || hs.corr != 0 || hs.clientID != "samsa-broker-7" {
		t.Fatalf("handshake: key %d v%d corr %d client %q", hs.key, hs.version, hs.corr, hs.clientID)
	}
	if av := hs.body.(*kmsg.ApiVersionsRequest); av.ClientSoftwareName != "samsa" || av.ClientSoftwareVersion != "dev" {
		t.Fatalf("software %q %q", av.ClientSoftwareName, av.ClientSoftwareVersion)
	}
	if r := next(t, p); r.key != 6 || r.version != 8 || r.corr != 1 || r.clientID != "samsa-broker-7" {
		t.Fatalf("UpdateMetadata arrived as key %d v%d corr %d client %q", r.key, r.version, r.corr, r.clientID)
	}

	// A non-flexible version (header v1) on the same connection.
	p.set(func(p *fakePeer) { p.setAPI(3, 0, 7) })
	resp, err = c.Send(ctx, p.addr, metadataReq("a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	// The connection's versions were read at the handshake: still v12.
	if r := next(t, p); r.key != 3 || r.version != 12 || r.corr != 2 {
		t.Fatalf("Metadata arrived as key %d v%d corr %d", r.key, r.version, r.corr)
	}
	if m := resp.(*kmsg.MetadataResponse); len(m.Topics) != 2 || *m.Topics[1].Topic != "b" {
		t.Fatalf("echo: %+v", m.Topics)
	}

	// A new connection learns the new range.
	c.current(p.addr).kill(errors.New("test"))
	if _, err = c.Send(ctx, p.addr, metadataReq("a")); err != nil {
		t.Fatal(err)
	}
	if hs := next(t, p); hs.key != wire.KeyApiVersions || hs.corr != 0 {
		t.Fatalf("no new handshake: key %d corr %d", hs.key, hs.corr)
	}
	if r := next(t, p); r.version != 7 || r.corr != 1 {
		t.Fatalf("Metadata v%d corr %d on the new connection, want v7 corr 1", r.version, r.corr)
	}
}

func TestHandshakeFallsBack(t *testing.T) {
	for _, peerMax := range []int16{0, 1, 2} {
		t.Run(fmt.Sprintf("peer ApiVersions max v%d", peerMax), func(t *testing.T) {
			noLeaks(t)
			p := startPeer(t)
			p.set(func(p *fakePeer) { p.maxApiVersions = peerMax })
			c := newClient(t, Config{})
			if _, err := c.Send(context.Background(), p.addr, kmsg.NewPtrUpdateMetadataRequest()); err != nil {
				t.Fatal(err)
			}
			if r := next(t, p); r.key != wire.KeyApiVersions || r.version != 3 {
				t.Fatalf("first: key %d v%d", r.key, r.version)
			}
			if r := next(t, p); r.key != wire.KeyApiVersions || r.version != peerMax || r.corr != 1 {
				t.Fatalf("retry: key %d v%d corr %d, want ApiVersions v%d corr 1", r.key, r.version, r.corr, peerMax)
			}
			if r := next(t, p); r.key != 6 || r.version != 8 {
				t.Fatalf("then key %d v%d", r.key, r.version)
			}
		})
	}
}

func TestHandshakeErrorFailsTheConnection(t *testing.T) {
	noLeaks(t)
	p := startPeer(t)
	// A peer that refuses even v0 is not one to talk to.
	p.set(func(p *fakePeer) { p.maxApiVersions = -1 })
	c := newClient(t, Config{})
	_, err := c.Send(context.Background(), p.addr, kmsg.NewPtrUpdateMetadataRequest())
	if !errors.Is(err, ErrConnection) {
		t.Fatalf("err %v, want ErrConnection", err)
	}
}

func TestVersionChoice(t *testing.T) {
	um := func() kmsg.Request { return kmsg.NewPtrUpdateMetadataRequest() }
	for _, tc := range []struct {
		name       string
		min, max   int16 // the peer's UpdateMetadata range; min > max: not served
		req        func() kmsg.Request
		want       int16
		unsupports bool
	}{
		{name: "peer knows more than kmsg", min: 0, max: 100, req: um, want: kmsg.NewPtrUpdateMetadataRequest().MaxVersion()},
		{name: "peer knows less", min: 0, max: 5, req: um, want: 5},
		{name: "peer's min above our max", min: 50, max: 60, req: um, unsupports: true},
		{name: "peer lacks the key", min: 1, max: 0, req: um, unsupports: true},
		{name: "pinned below the peer's max", min: 0, max: 8, req: func() kmsg.Request { return Pin(kmsg.NewPtrUpdateMetadataRequest(), 7) }, want: 7},
		{name: "pinned v0", min: 0, max: 8, req: func() kmsg.Request { return Pin(kmsg.NewPtrUpdateMetadataRequest(), 0) }, want: 0},
		{name: "pinned through a pointer", min: 0, max: 8, req: func() kmsg.Request {
			p := Pin(kmsg.NewPtrUpdateMetadataRequest(), 6)
			return &p
		}, want: 6},
		{name: "pinned above the peer's max", min: 0, max: 6, req: func() kmsg.Request { return Pin(kmsg.NewPtrUpdateMetadataRequest(), 7) }, unsupports: true},
		{name: "pinned below the peer's min", min: 5, max: 8, req: func() kmsg.Request { return Pin(kmsg.NewPtrUpdateMetadataRequest(), 4) }, unsupports: true},
		{name: "pinned above kmsg's max", min: 0, max: 100, req: func() kmsg.Request { return Pin(kmsg.NewPtrUpdateMetadataRequest(), 99) }, unsupports: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noLeaks(t)
			p := startPeer(t)
			p.set(func(p *fakePeer) { p.setAPI(6, tc.min, tc.max) })
			c := newClient(t, Config{})
			resp, err := c.Send(context.Background(), p.addr, tc.req())
			if tc.unsupports {
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("err %v, want ErrUnsupported", err)
				}
				// The connection is fine for what the peer does serve.
				if _, err := c.Send(context.Background(), p.addr, metadataReq()); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			next(t, p) // ApiVersions
			if r := next(t, p); r.version != tc.want || resp.GetVersion() != tc.want {
				t.Fatalf("sent v%d, response v%d, want v%d", r.version, resp.GetVersion(), tc.want)
			}
		})
	}
}

func TestReconnectAfterThePeerCloses(t *testing.T) {
	noLeaks(t)
	p := startPeer(t)
	c := newClient(t, Config{})
	ctx := context.Background()
	if _, err := c.Send(ctx, p.addr, metadataReq("a")); err != nil {
		t.Fatal(err)
	}
	first := c.current(p.addr)
	p.dropConns()
	<-first.dead // the reader saw the close
	if !errors.Is(first.deathErr(), ErrConnection) {
		t.Fatalf("death %v", first.deathErr())
	}
	if _, err := c.Send(ctx, p.addr, metadataReq("b")); err != nil {
		t.Fatal(err)
	}
	if c.current(p.addr) == first {
		t.Fatal("the dead connection was reused")
	}
	if n := handshakes(p); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
}

func TestConnectionLossFailsRequestsInFlight(t *testing.T) {
	noLeaks(t)
	p := startPeer(t)
	release := make(chan struct{})
	p.set(func(p *fakePeer) {
		p.handle = func(r received) kmsg.Response {
			if r.key == 4 { // LeaderAndIsr: the peer goes away without answering
				return nil
			}
			if r.key == 3 { // Metadata: held until released, so both are in flight
				select {
				case <-release:
				case <-p.stop:
				}
			}
			return echo(r)
		}
	})
	c := newClient(t, Config{})
	ctx := context.Background()
	errs := make(chan error, 2)
	go func() {
		_, err := c.Send(ctx, p.addr, metadataReq("held"))
		errs <- err
	}()
	if r := next(t, p); r.key != wire.KeyApiVersions {
		t.Fatalf("key %d", r.key)
	}
	next(t, p) // Metadata, now held
	go func() {
		_, err := c.Send(ctx, p.addr, kmsg.NewPtrLeaderAndISRRequest())
		errs <- err
	}()
	close(release) // Metadata answered, then LeaderAndIsr read and the connection closed
	var lost int
	for range 2 {
		if err := <-errs; errors.Is(err, ErrConnection) {
			lost++
		} else if err != nil {
			t.Fatalf("err %v", err)
		}
	}
	if lost != 1 {
		t.Fatalf("%d requests lost, want 1 (LeaderAndIsr)", lost)
	}
	if _, err := c.Send(ctx, p.addr, metadataReq("after")); err != nil {
		t.Fatalf("after the loss: %v", err)
	}
}

func TestTimeoutClosesTheConnection(t *testing.T) {
	noLeaks(t)
	p := startPeer(t)
	answer := make(chan bool, 1)
	p.set(func(p *fakePeer) {
		p.handle = func(r received) kmsg.Response {
			select {
			case <-answer:
				return echo(r)
			case <-p.stop:
				return nil
			}
		}
	})
	// Short, so the test is quick; long enough that the handshake, which
	// the peer answers at once, is not what times out on a busy machine.
	c := newClient(t, Config{Timeout: 500 * time.Millisecond})
	ctx := context.Background()
	_, err := c.Send(ctx, p.addr, metadataReq("slow"))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
	// A late answer would come before the next request's: the
	// connection is closed at once.
	slow := c.current(p.addr)
	if slow.alive() {
		t.Fatal("the connection outlived the timeout")
	}
	next(t, p)
	next(t, p)
	answer <- true // the held request
	answer <- true // the next one, on a new connection
	if _, err := c.Send(ctx, p.addr, metadataReq("fast")); err != nil {
		t.Fatalf("after the timeout: %v", err)
	}
	if r := next(t, p); r.key != wire.KeyApiVersions {
		t.Fatalf("key %d: no new connection", r.key)
	}
}

// holdingPeer is a peer that holds its answer to a Metadata request for
// the one topic "abandoned" until release is closed.
func holdingPeer(t *testing.T) (p *fakePeer, release chan struct{}) {
	p, release = startPeer(t), make(chan struct{})
	p.set(func(p *fakePeer) {
		p.handle = func(r received) kmsg.Response {
			if m, ok := r.body.(*kmsg.MetadataRequest); ok && len(m.Topics) == 1 && *m.Topics[0].Topic == "abandoned" {
				<-release
			}
			return echo(r)
		}
	})
	return p, release
}

func TestCancelledSendKeepsTheConnection(t *testing.T) {
	noLeaks(t)
	p, release := holdingPeer(t)
	c := newClient(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Send(ctx, p.addr, metadataReq("abandoned"))
		done <- err
	}()
	next(t, p)
	next(t, p) // the abandoned request is being handled
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	close(release)
	resp, err := c.Send(context.Background(), p.addr, metadataReq("kept"))
	if err != nil {
		t.Fatal(err)
	}
	// Its own response, not the abandoned one's, on the same connection.
	if m := resp.(*kmsg.MetadataResponse); len(m.Topics) != 1 || *m.Topics[0].Topic != "kept" {
		t.Fatalf("got %+v", m.Topics)
	}
	if r := next(t, p); r.key != 3 || r.corr != 2 {
		t.Fatalf("key %d corr %d: not the first connection", r.key, r.corr)
	}
}

func TestPipelinedSendsGetTheirOwnResponses(t *testing.T) {
	noLeaks(t)
	p := startPeer(t)
	c := newClient(t, Config{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			name := fmt.Sprintf("t%d", i)
			resp, err := c.Send(context.Background(), p.addr, metadataReq(name))
			if err != nil {
				errs <- err
				return
			}
			if m := resp.(*kmsg.MetadataResponse); len(m.Topics) != 1 || *m.Topics[0].Topic != name {
				errs <- fmt.Errorf("asked %s, got %+v", name, m.Topics)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := handshakes(p); n != 1 {
		t.Fatalf("%d connections, want 1", n)
	}
}

func TestBadResponses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame func(corr int32) []byte
		want  error
	}{
		{name: "wrong correlation id", want: ErrConnection, frame: func(corr int32) []byte {
			return wire.AppendResponse(nil, corr+1, kmsg.NewPtrUpdateMetadataResponse())
		}},
		{name: "oversized frame", want: ErrConnection, frame: func(int32) []byte { return []byte{0x7f, 0, 0, 0} }},
		{name: "truncated body", want: ErrMalformedResponse, frame: func(corr int32) []byte {
			return []byte{0, 0, 0, 4, byte(corr >> 24), byte(corr >> 16), byte(corr >> 8), byte(corr)}
		}},
		{name: "bad tagged fields", want: ErrMalformedResponse, frame: func(corr int32) []byte {
			return []byte{0, 0, 0, 6, byte(corr >> 24), byte(corr >> 16), byte(corr >> 8), byte(corr), 1, 0}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noLeaks(t)
			p := startPeer(t)
			p.set(func(p *fakePeer) {
				p.handle = func(r received) kmsg.Response {
					if _, err := r.conn.Write(tc.frame(r.corr)); err != nil {
						t.Error(err)
					}
					<-p.stop
					return nil
				}
			})
			c := newClient(t, Config{MaxResponseBytes: 1 << 20})
			_, err := c.Send(context.Background(), p.addr, kmsg.NewPtrUpdateMetadataRequest())
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
}

func TestDialFailure(t *testing.T) {
	noLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := newClient(t, Config{})
	if _, err := c.Send(context.Background(), addr, metadataReq()); !errors.Is(err, ErrConnection) {
		t.Fatalf("err %v, want ErrConnection", err)
	}
	// A custom dialer is used, and its failure reported.
	boom := errors.New("no route")
	c2 := newClient(t, Config{Dial: func(context.Context, string) (net.Conn, error) { return nil, boom }})
	if _, err := c2.Send(context.Background(), addr, metadataReq()); !errors.Is(err, boom) || !errors.Is(err, ErrConnection) {
		t.Fatalf("err %v, want the dialer's", err)
	}
}

func TestCloseFailsRequestsInFlight(t *testing.T) {
	noLeaks(t)
	p := startPeer(t)
	p.set(func(p *fakePeer) {
		p.handle = func(received) kmsg.Response { <-p.stop; return nil }
	})
	c := New(Config{})
	done := make(chan error, 1)
	go func() {
		_, err := c.Send(context.Background(), p.addr, metadataReq())
		done <- err
	}()
	next(t, p)
	next(t, p)
	c.Close()
	if err := <-done; !errors.Is(err, ErrConnection) || !errors.Is(err, ErrClosed) {
		t.Fatalf("err %v, want ErrConnection and ErrClosed", err)
	}
	if _, err := c.Send(context.Background(), p.addr, metadataReq()); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	c.Close() // twice is fine
}
