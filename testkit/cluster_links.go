package testkit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// InterBrokerListener is the listener name a Cluster with BrokerLinks
// gives its brokers' inter-broker traffic (inter.broker.listener.name);
// clients keep using PLAINTEXT.
const InterBrokerListener = "INTERNAL"

// brokerLinks routes every inter-broker connection of a Cluster (Config
// BrokerLinks) and cuts those of the brokers a test isolated.
//
// Each broker has a second listener, INTERNAL on 127.0.0.1:<port>, but
// advertises INTERNAL as the address of its router: a listener of this
// process that forwards to the real port. Every inter-broker connection a
// broker opens (its follower fetches, AlterPartition and the other
// requests to the controller, the controller's LeaderAndIsr,
// UpdateMetadata and StopReplica) therefore goes through the router of
// the broker it reaches. The router finds which broker opened the
// connection by its owner: the process whose file descriptors hold the
// socket at the connection's other end (Linux /proc; every broker runs on
// this machine). A connection between two brokers either of which is cut
// is reset (SO_LINGER 0) and refused while the cut lasts, so no byte
// passes between a cut broker and the others in either direction, while
// its ZooKeeper link (a separate faultproxy) and its client listener are
// untouched.
type brokerLinks struct {
	c *Cluster

	mu      sync.Mutex
	routers map[int32]*linkRouter
	cut     map[int32]bool
	open    map[*brokerLink]struct{}
	stats   map[int32]*LinkStats // by the broker a connection reached
	closed  bool
	wg      sync.WaitGroup
}

// linkRouter is the advertised INTERNAL address of one broker.
type linkRouter struct {
	to     int32 // the broker it reaches
	b      *ClusterBroker
	ln     net.Listener
	target string // 127.0.0.1:<the broker's INTERNAL port>
}

// brokerLink is one routed connection: from (-1 when no broker owns its
// other end) to the router's broker.
type brokerLink struct {
	from, to       int32
	client, server *net.TCPConn
}

// LinkStats counts the connections that reached one broker's INTERNAL
// listener through its router.
type LinkStats struct {
	// Accepted counts forwarded connections by the broker that opened
	// them (-1: none of the cluster's broker processes).
	Accepted map[int32]int64
	// Refused counts connections reset on arrival because the link was
	// cut; Cut counts open ones reset by CutFromBrokers.
	Refused, Cut int64
}

func newBrokerLinks(c *Cluster) *brokerLinks {
	return &brokerLinks{c: c, routers: map[int32]*linkRouter{}, cut: map[int32]bool{},
		open: map[*brokerLink]struct{}{}, stats: map[int32]*LinkStats{}}
}

// add starts broker id's router towards its INTERNAL port and returns
// the router's address, the one the broker advertises.
func (l *brokerLinks) add(b *ClusterBroker, internalPort int) (string, error) {
	id := b.id
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("testkit: inter-broker router: %w", err)
	}
	r := &linkRouter{to: id, b: b, ln: ln, target: net.JoinHostPort("127.0.0.1", strconv.Itoa(internalPort))}
	l.mu.Lock()
	l.routers[id] = r
	l.stats[id] = &LinkStats{Accepted: map[int32]int64{}}
	l.mu.Unlock()
	l.wg.Add(1)
	go l.accept(r)
	return ln.Addr().String(), nil
}

func (l *brokerLinks) accept(r *linkRouter) {
	defer l.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // EMFILE and the like
			continue
		}
		l.wg.Add(1)
		go l.forward(r, c.(*net.TCPConn))
	}
}

// severedLocked reports whether a connection from broker from to broker
// to must not pass. A broker's connections to itself are not between
// brokers; one whose opener is unknown (-1) cannot be told apart from a
// cut broker's, so it does not reach a cut broker either.
func (l *brokerLinks) severedLocked(from, to int32) bool {
	if from == to {
		return false
	}
	return l.cut[to] || (from >= 0 && l.cut[from])
}

func (l *brokerLinks) forward(r *linkRouter, client *net.TCPConn) {
	defer l.wg.Done()
	from := l.owner(client)
	l.mu.Lock()
	refuse := l.closed || l.severedLocked(from, r.to)
	if refuse {
		l.stats[r.to].Refused++
	}
	l.mu.Unlock()
	if refuse {
		resetTCP(client)
		return
	}
	c, err := net.DialTimeout("tcp", r.target, 5*time.Second)
	if err != nil {
		resetTCP(client)
		return
	}
	link := &brokerLink{from: from, to: r.to, client: client, server: c.(*net.TCPConn)}
	l.mu.Lock()
	if l.closed || l.severedLocked(from, r.to) { // cut while dialling
		l.stats[r.to].Refused++
		l.mu.Unlock()
		link.reset()
		return
	}
	l.open[link] = struct{}{}
	l.stats[r.to].Accepted[from]++
	l.mu.Unlock()
	var wg sync.WaitGroup
	pipe := func(dst, src *net.TCPConn) {
		defer wg.Done()
		if _, err := io.Copy(dst, src); err != nil {
			link.reset() // a reset (or a cut) ends both directions
			return
		}
		_ = dst.CloseWrite() // a clean end is passed on as a half-close
	}
	wg.Add(2)
	go pipe(link.server, link.client)
	go pipe(link.client, link.server)
	wg.Wait()
	l.mu.Lock()
	_, mine := l.open[link]
	delete(l.open, link)
	l.mu.Unlock()
	if mine {
		_ = link.client.Close()
		_ = link.server.Close()
	}
}

func (k *brokerLink) reset() {
	resetTCP(k.client)
	resetTCP(k.server)
}

func resetTCP(c *net.TCPConn) {
	_ = c.SetLinger(0)
	_ = c.Close()
}

// owner finds the broker whose process holds the other end of conn (a
// connection to a router, so both ends are on this machine): the socket
// whose local port is conn's remote port and whose remote port is the
// router's, in /proc/net/tcp or tcp6 (a JVM's sockets are IPv6 ones), and
// then the broker process with that socket's inode among its fds. -1 when
// no running broker holds it.
func (l *brokerLinks) owner(conn *net.TCPConn) int32 {
	peer, ok1 := conn.RemoteAddr().(*net.TCPAddr)
	local, ok2 := conn.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return -1
	}
	inode := socketInode(peer.Port, local.Port)
	if inode == "" {
		return -1
	}
	want := "socket:[" + inode + "]"
	l.mu.Lock()
	brokers := make([]*ClusterBroker, 0, len(l.routers))
	for _, r := range l.routers {
		brokers = append(brokers, r.b)
	}
	l.mu.Unlock()
	for _, b := range brokers {
		pid := b.lastPID.Load()
		if pid == 0 {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", strconv.FormatInt(pid, 10), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join("/proc", strconv.FormatInt(pid, 10), "fd", fd.Name())); err == nil && link == want {
				return b.id
			}
		}
	}
	return -1
}

// socketInode returns the inode of the TCP socket with local port lport
// and remote port rport, from /proc/net/tcp and /proc/net/tcp6; "" when
// there is none.
func socketInode(lport, rport int) string {
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		inode := scanInode(f, lport, rport)
		f.Close()
		if inode != "" {
			return inode
		}
	}
	return ""
}

// scanInode reads a /proc/net/tcp table: "sl local rem st txq:rxq tr:when
// retrnsmt uid timeout inode ...", addresses as HEXIP:HEXPORT.
func scanInode(r io.Reader, lport, rport int) string {
	s := bufio.NewScanner(r)
	s.Scan() // the header
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) < 10 {
			continue
		}
		if hexPort(f[1]) == lport && hexPort(f[2]) == rport && f[9] != "0" {
			return f[9]
		}
	}
	return ""
}

func hexPort(addr string) int {
	_, p, ok := strings.Cut(addr, ":")
	if !ok {
		return -1
	}
	n, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return -1
	}
	return int(n)
}

// CutFromBrokers cuts broker id off from every other broker of the
// cluster, in both directions: the connections between them are reset and
// new ones refused, until HealBrokers. The broker keeps its ZooKeeper
// session and serves clients as before. The cluster must have been
// started with BrokerLinks.
func (c *Cluster) CutFromBrokers(id int32) error {
	l, err := c.brokerLinks(id)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.cut[id] = true
	var cut []*brokerLink
	for k := range l.open {
		if l.severedLocked(k.from, k.to) {
			cut = append(cut, k)
			delete(l.open, k)
			l.stats[k.to].Cut++
		}
	}
	l.mu.Unlock()
	for _, k := range cut {
		k.reset()
	}
	return nil
}

// HealBrokers lets broker id reach the other brokers again, and them it
// (a link stays cut while either of its brokers is cut).
func (c *Cluster) HealBrokers(id int32) error {
	l, err := c.brokerLinks(id)
	if err != nil {
		return err
	}
	l.mu.Lock()
	delete(l.cut, id)
	l.mu.Unlock()
	return nil
}

// BrokerLinkStats returns what broker id's inter-broker router did since
// the cluster started (BrokerLinks).
func (c *Cluster) BrokerLinkStats(id int32) (LinkStats, error) {
	l, err := c.brokerLinks(id)
	if err != nil {
		return LinkStats{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := *l.stats[id]
	s.Accepted = make(map[int32]int64, len(l.stats[id].Accepted))
	for k, v := range l.stats[id].Accepted {
		s.Accepted[k] = v
	}
	return s, nil
}

func (c *Cluster) brokerLinks(id int32) (*brokerLinks, error) {
	if c.links == nil {
		return nil, errors.New("testkit: the cluster was started without BrokerLinks")
	}
	c.links.mu.Lock()
	_, ok := c.links.routers[id]
	c.links.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("testkit: no broker %d", id)
	}
	return c.links, nil
}

func (l *brokerLinks) healAll() {
	l.mu.Lock()
	clear(l.cut)
	l.mu.Unlock()
}

// close stops the routers and resets every routed connection.
func (l *brokerLinks) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	for _, r := range l.routers {
		_ = r.ln.Close()
	}
	open := l.open
	l.open = map[*brokerLink]struct{}{}
	l.mu.Unlock()
	for k := range open {
		k.reset()
	}
	l.wg.Wait()
}

// linkProperties are broker id's listener settings in a cluster with
// BrokerLinks: PLAINTEXT for clients on port, INTERNAL on internalPort
// advertised as the router's address, and INTERNAL between brokers.
func linkProperties(port, internalPort int, router string) [][2]string {
	client := "PLAINTEXT://127.0.0.1:" + strconv.Itoa(port)
	return [][2]string{
		{"listeners", client + "," + InterBrokerListener + "://127.0.0.1:" + strconv.Itoa(internalPort)},
		{"advertised.listeners", client + "," + InterBrokerListener + "://" + router},
		{"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT," + InterBrokerListener + ":PLAINTEXT"},
		{"inter.broker.listener.name", InterBrokerListener},
	}
}
