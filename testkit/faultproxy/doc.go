// Package faultproxy is a TCP proxy for tests that need the network to
// fail on cue: it forwards every connection it accepts to one target
// address, and on demand cuts all of them at once or refuses new ones.
//
// # Use
//
//	p, err := faultproxy.New(brokerAddr) // listens on 127.0.0.1, a free port
//	defer p.Close()
//	// point the client at p.Addr() instead of brokerAddr ...
//	p.CutAll()      // every proxied connection is reset, both sides
//	p.SetDown(true) // new connections are accepted and reset at once
//	p.SetDown(false)
//
// A Kafka broker tells clients where to connect in its Metadata answers,
// so a client given only the proxy's address as its bootstrap server would
// still go around the proxy for everything after the first request. Make
// the broker advertise the proxy: start the proxy first (it dials its
// target only when a client connects, so the target need not be up yet),
// then start the broker on a port chosen beforehand with
// advertised.listeners set to PLAINTEXT://<p.Addr()>. With testkit:
//
//	port, _ := testkit.FreePort()
//	p, _ := faultproxy.New(fmt.Sprintf("127.0.0.1:%d", port))
//	b := testkit.StartBroker(t, testkit.BrokerConfig{Port: port,
//		Args: []string{"--advertised.listeners", "PLAINTEXT://" + p.Addr()}})
//
// # What the peers see
//
// CutAll and Close close both sockets of every proxied connection with
// SO_LINGER 0, so each peer gets a TCP reset (ECONNRESET on its next read
// or write) rather than a clean end of stream: the way a crashed middlebox
// or a dropped NAT entry looks. Bytes in flight inside the proxy are lost.
//
// While down (SetDown(true)) the listener stays open, so the port is never
// lost to another process, but each new connection is reset as soon as it
// is accepted: clients see the connection fail before any answer arrives.
// Connections that were open when the proxy went down keep working; call
// CutAll as well to drop them.
//
// A clean close by either peer is forwarded as a half-close (the proxy
// shuts down writing towards the other peer) and the connection ends when
// both directions have ended. If the target cannot be reached, the
// client's connection is reset.
//
// Stats counts connections accepted, refused and cut, and clean closes
// from each side, so a test can check that its client really went through
// the proxy and see who hung up when nobody cut. The counters move on the
// proxy's goroutines, shortly after the event: WaitStats waits for the
// ones a test expects.
//
// # Threading
//
// All methods are safe for concurrent use. Each proxied connection uses
// two goroutines, one per direction; Close waits for all of them.
package faultproxy
