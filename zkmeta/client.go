package zkmeta

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// Config says how to reach ZooKeeper, with Kafka's broker settings.
type Config struct {
	// Connect is Kafka's zookeeper.connect: "h1:2181,h2:2181/chroot". The
	// chroot, everything from the first '/', is optional; Connect creates
	// it when missing, as Kafka does.
	Connect string
	// SessionTimeout is zookeeper.session.timeout.ms (default 18 s, Kafka's).
	SessionTimeout time.Duration
	// ConnectionTimeout bounds Connect's wait for the first session
	// (zookeeper.connection.timeout.ms; default SessionTimeout, as Kafka).
	ConnectionTimeout time.Duration
	// Log receives one line per session change; nil discards.
	Log *slog.Logger
}

// Client is a ZooKeeper session for one broker, speaking Kafka's layout.
// It is safe for concurrent use; calls go out in parallel on one
// connection (go-zookeeper pipelines them) and no lock is held across a
// round trip. A call made while the connection is down waits for it to
// come back (as Kafka's retryRequestUntilConnected) unless the session
// expired, which fails the call with ErrSessionExpired.
type Client struct {
	cfg  Config
	log  *slog.Logger
	conn *zk.Conn
	root string // chroot, "" for none; every path is root+path

	closeOnce sync.Once
	closed    chan struct{}
	events    *eventQueue

	mu           sync.Mutex
	up           chan struct{} // closed while a session is established; replaced when it is lost
	sessionID    int64
	pastSessions map[int64]bool // sessions of this client that expired
	phase        sessionPhase
}

var acl = zk.WorldACL(zk.PermAll)

// ParseConnect splits Kafka's zookeeper.connect into servers and chroot
// ("" when none; never a trailing '/').
func ParseConnect(s string) (servers []string, chroot string, err error) {
	hosts := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hosts, chroot = s[:i], strings.TrimRight(s[i:], "/")
	}
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			servers = append(servers, h)
		}
	}
	if len(servers) == 0 {
		return nil, "", fmt.Errorf("zkmeta: zookeeper.connect %q names no server", s)
	}
	if strings.Contains(chroot, "//") {
		return nil, "", fmt.Errorf("zkmeta: zookeeper.connect %q: malformed chroot", s)
	}
	return servers, chroot, nil
}

// Connect opens a session and waits until it exists, up to ctx and
// cfg.ConnectionTimeout, then creates the chroot if it is missing.
func Connect(ctx context.Context, cfg Config) (*Client, error) {
	servers, chroot, err := ParseConnect(cfg.Connect)
	if err != nil {
		return nil, err
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 18 * time.Second
	}
	if cfg.ConnectionTimeout <= 0 {
		cfg.ConnectionTimeout = cfg.SessionTimeout
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		cfg:          cfg,
		log:          log.With("zookeeper", cfg.Connect),
		root:         chroot,
		closed:       make(chan struct{}),
		events:       newEventQueue(),
		up:           make(chan struct{}),
		pastSessions: map[int64]bool{},
	}
	// c.mu keeps the connection's first events (onEvent reads c.conn)
	// waiting until c.conn is set; zk.Connect itself sends none.
	c.mu.Lock()
	conn, _, err := zk.Connect(servers, cfg.SessionTimeout,
		zk.WithLogger(zkLogger{c.log}), zk.WithLogInfo(false), zk.WithEventCallback(c.onEvent))
	c.conn = conn
	c.mu.Unlock()
	if err != nil {
		c.events.close()
		return nil, fmt.Errorf("zkmeta: connect %s: %w", cfg.Connect, err)
	}
	wait, cancel := context.WithTimeout(ctx, cfg.ConnectionTimeout)
	defer cancel()
	if err := c.waitSession(wait); err != nil {
		c.Close()
		return nil, fmt.Errorf("zkmeta: no ZooKeeper session with %s within %v: %w", cfg.Connect, cfg.ConnectionTimeout, err)
	}
	if chroot != "" {
		if err := c.createRecursiveAbs(chroot, nil, false); err != nil {
			c.Close()
			return nil, fmt.Errorf("zkmeta: creating chroot %s: %w", chroot, err)
		}
	}
	return c, nil
}

// Close ends the session (its ephemeral znodes go at once) and closes
// Events and every open watch channel.
func (c *Client) Close() {
	c.closeOnce.Do(func() {
		close(c.closed)
		if c.conn != nil {
			c.conn.Close()
		}
		c.events.close()
	})
}

// Conn is the underlying connection, for tests and tools. Its paths are
// absolute: prefix them with Chroot.
func (c *Client) Conn() *zk.Conn { return c.conn }

// Chroot is the chroot of the connect string, "" for none.
func (c *Client) Chroot() string { return c.root }

func (c *Client) abs(p string) string { return c.root + p }

// waitSession blocks until a session is established, ctx ends or the
// client is closed.
func (c *Client) waitSession(ctx context.Context) error {
	c.mu.Lock()
	up := c.up
	c.mu.Unlock()
	select {
	case <-up:
		return nil
	case <-c.closed:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retry runs op until it gets an answer from the server: a connection
// loss waits for the connection to come back and tries again.
func (c *Client) retry(op func() error) error {
	for {
		err := op()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrConnectionClosed), errors.Is(err, zk.ErrNoServer):
			if werr := c.waitSession(context.Background()); werr != nil {
				return werr
			}
		case errors.Is(err, zk.ErrClosing):
			return ErrClosed
		default:
			return err
		}
	}
}

func (c *Client) get(p string) (data []byte, st *zk.Stat, err error) {
	err = c.retry(func() (e error) { data, st, e = c.conn.Get(c.abs(p)); return })
	return data, st, pathError("get", p, err)
}

func (c *Client) getW(p string) (data []byte, st *zk.Stat, ch <-chan struct{}, err error) {
	var ev <-chan zk.Event
	err = c.retry(func() (e error) { data, st, ev, e = c.conn.GetW(c.abs(p)); return })
	if err != nil {
		return nil, nil, nil, pathError("get", p, err)
	}
	return data, st, c.watch(ev), nil
}

func (c *Client) exists(p string) (ok bool, st *zk.Stat, err error) {
	err = c.retry(func() (e error) { ok, st, e = c.conn.Exists(c.abs(p)); return })
	return ok, st, pathError("exists", p, err)
}

func (c *Client) existsW(p string) (ok bool, st *zk.Stat, ch <-chan struct{}, err error) {
	var ev <-chan zk.Event
	err = c.retry(func() (e error) { ok, st, ev, e = c.conn.ExistsW(c.abs(p)); return })
	if err != nil {
		return false, nil, nil, pathError("exists", p, err)
	}
	return ok, st, c.watch(ev), nil
}

func (c *Client) children(p string) (names []string, err error) {
	err = c.retry(func() (e error) { names, _, e = c.conn.Children(c.abs(p)); return })
	return names, pathError("children", p, err)
}

func (c *Client) childrenW(p string) (names []string, ch <-chan struct{}, err error) {
	var ev <-chan zk.Event
	err = c.retry(func() (e error) { names, _, ev, e = c.conn.ChildrenW(c.abs(p)); return })
	if err != nil {
		return nil, nil, pathError("children", p, err)
	}
	return names, c.watch(ev), nil
}

func (c *Client) set(p string, data []byte, version int32) (st *zk.Stat, err error) {
	err = c.retry(func() (e error) { st, e = c.conn.Set(c.abs(p), data, version); return })
	return st, pathError("set", p, err)
}

func (c *Client) create(p string, data []byte, flags int32) (name string, err error) {
	err = c.retry(func() (e error) { name, e = c.conn.Create(c.abs(p), data, flags, acl); return })
	return strings.TrimPrefix(name, c.root), pathError("create", p, err)
}

func (c *Client) delete(p string, version int32) error {
	return pathError("delete", p, c.retry(func() error { return c.conn.Delete(c.abs(p), version) }))
}

// multi runs ops (paths already absolute) as one transaction. On failure
// the error is the first failing operation's, and the responses say
// which.
func (c *Client) multi(ops ...any) (res []zk.MultiResponse, err error) {
	err = c.retry(func() (e error) { res, e = c.conn.Multi(ops...); return })
	return res, err
}

// watch turns a one-shot go-zookeeper watch into a channel that closes on
// the event, on session expiry, or when the client closes.
func (c *Client) watch(ev <-chan zk.Event) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		<-ev
		close(out)
	}()
	return out
}

// createRecursive creates p (relative to the chroot) with data, and any
// missing parents with no data, as KafkaZkClient.createRecursive.
// mustBeNew: an existing p is ErrNodeExists; otherwise it is success.
func (c *Client) createRecursive(p string, data []byte, mustBeNew bool) error {
	return c.createRecursiveAbs(c.abs(p), data, mustBeNew)
}

func (c *Client) createRecursiveAbs(abs string, data []byte, mustBeNew bool) error {
	err := c.retry(func() error { _, e := c.conn.Create(abs, data, 0, acl); return e })
	if errors.Is(err, zk.ErrNoNode) {
		if parent := parentPath(abs); parent != "" {
			if perr := c.createRecursiveAbs(parent, nil, false); perr != nil {
				return perr
			}
		}
		err = c.retry(func() error { _, e := c.conn.Create(abs, data, 0, acl); return e })
	}
	if errors.Is(err, zk.ErrNodeExists) && !mustBeNew {
		return nil
	}
	return pathError("create", strings.TrimPrefix(abs, c.root), err)
}

// deleteRecursive deletes p and everything under it; a missing p is no
// error. With fenced, every delete is checked against /controller_epoch's
// zkVersion (KafkaZkClient.deleteRecursive).
func (c *Client) deleteRecursive(p string, fenced bool, epochZkVersion int32) error {
	kids, err := c.children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := c.deleteRecursive(p+"/"+k, fenced, epochZkVersion); err != nil {
			return err
		}
	}
	if !fenced {
		err = c.delete(p, -1)
	} else {
		_, err = c.fenced(epochZkVersion, &zk.DeleteRequest{Path: c.abs(p), Version: -1})
	}
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// fenced runs ops as one multi behind check(/controller_epoch,
// epochZkVersion), Kafka's controller fencing. A failed check is
// ErrControllerMoved; another failure is the failing op's error, and the
// responses (without the check's) say which.
func (c *Client) fenced(epochZkVersion int32, ops ...any) ([]zk.MultiResponse, error) {
	all := append([]any{&zk.CheckVersionRequest{Path: c.abs(PathControllerEpoch), Version: epochZkVersion}}, ops...)
	res, err := c.multi(all...)
	if err == nil {
		return res[1:], nil
	}
	if len(res) > 0 && res[0].Error != nil {
		if errors.Is(res[0].Error, zk.ErrBadVersion) || errors.Is(res[0].Error, zk.ErrNoNode) {
			return nil, fmt.Errorf("%w: expected zkVersion %d", ErrControllerMoved, epochZkVersion)
		}
		return nil, pathError("check", PathControllerEpoch, res[0].Error)
	}
	if len(res) > 1 {
		return res[1:], err
	}
	return nil, err
}

// zkLogger sends go-zookeeper's log lines to slog at debug level.
type zkLogger struct{ log *slog.Logger }

func (l zkLogger) Printf(format string, args ...any) {
	l.log.Debug(fmt.Sprintf(format, args...))
}
