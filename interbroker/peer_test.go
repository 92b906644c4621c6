package interbroker

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire"
	"github.com/samsa-io/samsa/wire/kerr"
)

// fakePeer is a small Kafka server for the tests: it answers ApiVersions
// from its table and every other request through handle, one connection
// at a time in order, and reports every request it reads on got.
type fakePeer struct {
	t    testing.TB
	ln   net.Listener
	addr string

	// got receives every request read, ApiVersions included.
	got  chan received
	stop chan struct{} // closed by close: handlers blocked on it return
	wg   sync.WaitGroup

	mu    sync.Mutex // guards what follows; tests change it through set
	conns []net.Conn
	// apis is what ApiVersions advertises; maxApiVersions is the highest
	// ApiVersions version it accepts (above it answers v0
	// UNSUPPORTED_VERSION, as Kafka does).
	apis           []kmsg.ApiVersionsResponseApiKey
	maxApiVersions int16
	// handle answers a request; a nil response answers nothing and
	// closes the connection. It runs on the connection's goroutine, so
	// blocking in it holds that connection's later requests back.
	handle func(r received) kmsg.Response
}

// set changes the peer's behaviour for the requests it reads from now on.
func (p *fakePeer) set(f func(p *fakePeer)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

// received is one request as the peer read it.
type received struct {
	key, version int16
	corr         int32
	clientID     string
	body         kmsg.Request
	conn         net.Conn
}

// startPeer starts a fake peer that advertises UpdateMetadata,
// Metadata, LeaderAndIsr and ApiVersions 0-3, and echoes: an empty
// UpdateMetadata response, a Metadata response naming the requested
// topics.
func startPeer(t testing.TB) *fakePeer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &fakePeer{
		t: t, ln: ln, addr: ln.Addr().String(),
		apis: []kmsg.ApiVersionsResponseApiKey{
			{ApiKey: wire.KeyApiVersions, MinVersion: 0, MaxVersion: 3},
			{ApiKey: 6, MinVersion: 0, MaxVersion: 8},  // UpdateMetadata
			{ApiKey: 3, MinVersion: 0, MaxVersion: 12}, // Metadata
			{ApiKey: 4, MinVersion: 0, MaxVersion: 7},  // LeaderAndIsr
		},
		maxApiVersions: 3,
		handle:         echo,
		got:            make(chan received, 1024),
		stop:           make(chan struct{}),
	}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// echo is the default handler.
func echo(r received) kmsg.Response {
	resp := r.body.ResponseKind() // at the request's version
	if m, ok := r.body.(*kmsg.MetadataRequest); ok {
		out := resp.(*kmsg.MetadataResponse)
		for _, tp := range m.Topics {
			out.Topics = append(out.Topics, kmsg.MetadataResponseTopic{Topic: tp.Topic})
		}
	}
	return resp
}

// setAPI replaces (or adds) the advertised range of key; min > max
// removes it. Call it inside set.
func (p *fakePeer) setAPI(key, minV, maxV int16) {
	out := p.apis[:0]
	for _, a := range p.apis {
		if a.ApiKey != key {
			out = append(out, a)
		}
	}
	if minV <= maxV {
		out = append(out, kmsg.ApiVersionsResponseApiKey{ApiKey: key, MinVersion: minV, MaxVersion: maxV})
	}
	p.apis = out
}

func (p *fakePeer) accept() {
	defer p.wg.Done()
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns = append(p.conns, nc)
		p.mu.Unlock()
		p.wg.Add(1)
		go p.serve(nc)
	}
}

// dropConns closes every connection accepted so far, as a broker that
// restarts or drops idle connections does.
func (p *fakePeer) dropConns() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, nc := range p.conns {
		nc.Close()
	}
	p.conns = nil
}

func (p *fakePeer) close() {
	select {
	case <-p.stop:
		return
	default:
	}
	close(p.stop)
	p.ln.Close()
	p.dropConns()
	p.wg.Wait()
}

func (p *fakePeer) serve(nc net.Conn) {
	defer p.wg.Done()
	defer nc.Close()
	var size [4]byte
	for {
		frame, err := readFrame(nc, &size, 1<<20, func() []byte { return nil })
		if err != nil {
			return
		}
		r, err := parseRequest(frame)
		if err != nil {
			p.t.Errorf("fake peer: %v", err)
			return
		}
		r.conn = nc
		p.got <- r
		p.mu.Lock()
		handle, apis, maxAV := p.handle, p.apis, p.maxApiVersions
		p.mu.Unlock()
		var resp kmsg.Response
		if r.key == wire.KeyApiVersions {
			resp = apiVersions(r, apis, maxAV)
		} else if resp = handle(r); resp == nil {
			return
		} else {
			resp.SetVersion(r.version)
		}
		if _, err := nc.Write(wire.AppendResponse(nil, r.corr, resp)); err != nil {
			return
		}
	}
}

// apiVersions answers as a Kafka broker: a version above its own gets a
// v0 body with UNSUPPORTED_VERSION and its ApiVersions range (KIP-511).
func apiVersions(r received, apis []kmsg.ApiVersionsResponseApiKey, maxAV int16) kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	if r.version > maxAV {
		resp.ErrorCode = kerr.UnsupportedVersion.Int16()
		resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: wire.KeyApiVersions, MaxVersion: maxAV}}
		return resp
	}
	resp.SetVersion(r.version)
	resp.ApiKeys = apis
	return resp
}

// parseRequest reads a request frame as a broker would: header v1, or v2
// with tagged fields when the body's version is flexible.
func parseRequest(frame []byte) (received, error) {
	be := binary.BigEndian
	if len(frame) < 10 {
		return received{}, errors.New("short request frame")
	}
	r := received{key: int16(be.Uint16(frame)), version: int16(be.Uint16(frame[2:])), corr: int32(be.Uint32(frame[4:]))}
	rest := frame[10:]
	if n := int(int16(be.Uint16(frame[8:]))); n > 0 {
		r.clientID, rest = string(rest[:n]), rest[n:]
	}
	r.body = kmsg.RequestForKey(r.key)
	if r.body == nil {
		return r, errors.New("unknown key")
	}
	r.body.SetVersion(r.version)
	if r.key == wire.KeyApiVersions && r.version > 3 {
		return r, nil // a version this peer does not know: answered, not read
	}
	var err error
	if r.body.IsFlexible() {
		if rest, err = skipTags(rest); err != nil {
			return r, err
		}
	}
	return r, r.body.ReadFrom(rest)
}
