package zkmeta

import (
	"context"
	"log/slog"
	"strconv"
	"sync"

	"github.com/go-zookeeper/zk"
)

// SessionEvent is a change of the client's ZooKeeper session, as Events
// reports it to the owner.
type SessionEvent int

const (
	// Connected: the first session exists.
	Connected SessionEvent = iota + 1
	// Disconnected: the connection dropped; the session may still live
	// (ephemerals and watches stay if it comes back in time).
	Disconnected
	// Reconnected: the connection is back, with the same session.
	Reconnected
	// Expired: the session is gone: its ephemeral znodes are deleted and
	// its watches fired. The client opens a new session by itself.
	Expired
	// NewSession: a new session exists after an expiry; re-register
	// ephemerals and re-arm watches.
	NewSession
)

func (e SessionEvent) String() string {
	switch e {
	case Connected:
		return "Connected"
	case Disconnected:
		return "Disconnected"
	case Reconnected:
		return "Reconnected"
	case Expired:
		return "Expired"
	case NewSession:
		return "NewSession"
	}
	return "SessionEvent(" + strconv.Itoa(int(e)) + ")"
}

type sessionPhase int

const (
	phaseNone         sessionPhase = iota // no session yet
	phaseUp                               // session established, connected
	phaseDisconnected                     // session maybe alive, no connection
	phaseExpired                          // session lost, waiting for a new one
)

// Events delivers session changes in order. It never drops one (the queue
// behind it is unbounded) and is closed by Close.
func (c *Client) Events() <-chan SessionEvent { return c.events.out }

// SessionID is the current session's id, 0 while there is none.
func (c *Client) SessionID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.phase == phaseUp || c.phase == phaseDisconnected {
		return c.sessionID
	}
	return 0
}

// ownSession reports whether id is the current session.
func (c *Client) ownSession(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return id != 0 && id == c.sessionID && c.phase == phaseUp
}

// formerSession reports whether id is a session of this client that
// expired.
func (c *Client) formerSession(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pastSessions[id]
}

// onEvent is go-zookeeper's event callback; it runs on the connection's
// loop goroutine and must not block.
func (c *Client) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	c.mu.Lock()
	var out []SessionEvent
	switch ev.State {
	case zk.StateHasSession:
		id := c.conn.SessionID()
		switch {
		case c.phase == phaseNone:
			out = append(out, Connected)
		case c.phase == phaseExpired:
			out = append(out, NewSession)
		case id == c.sessionID:
			out = append(out, Reconnected)
		default: // a new session without an expiry seen first
			c.pastSessions[c.sessionID] = true
			out = append(out, Expired, NewSession)
		}
		c.sessionID = id
		c.phase = phaseUp
		select {
		case <-c.up:
		default:
			close(c.up)
		}
	case zk.StateDisconnected:
		if c.phase == phaseUp {
			c.phase = phaseDisconnected
			c.up = make(chan struct{})
			out = append(out, Disconnected)
		}
	case zk.StateExpired:
		if c.phase == phaseUp {
			c.up = make(chan struct{})
		}
		if c.phase != phaseExpired && c.phase != phaseNone {
			c.pastSessions[c.sessionID] = true
			c.phase = phaseExpired
			out = append(out, Expired)
		}
	}
	sid := c.sessionID
	c.mu.Unlock()
	for _, e := range out {
		level := slog.LevelInfo
		if e == Expired || e == Disconnected {
			level = slog.LevelWarn
		}
		c.log.Log(context.Background(), level, "zookeeper session "+e.String(), "session", "0x"+strconv.FormatInt(sid, 16))
		c.events.push(e)
	}
}

// eventQueue is an unbounded FIFO in front of a channel, so the
// connection's loop never waits for the owner.
type eventQueue struct {
	out    chan SessionEvent
	wake   chan struct{} // one token: the queue has grown
	done   chan struct{} // closed by close
	mu     sync.Mutex
	queue  []SessionEvent
	closer sync.Once
}

func newEventQueue() *eventQueue {
	q := &eventQueue{out: make(chan SessionEvent), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go q.run()
	return q
}

func (q *eventQueue) push(e SessionEvent) {
	q.mu.Lock()
	q.queue = append(q.queue, e)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *eventQueue) close() { q.closer.Do(func() { close(q.done) }) }

func (q *eventQueue) run() {
	defer close(q.out)
	for {
		q.mu.Lock()
		var next []SessionEvent
		next, q.queue = q.queue, nil
		q.mu.Unlock()
		for _, e := range next {
			select {
			case q.out <- e:
			case <-q.done:
				return
			}
		}
		select {
		case <-q.wake:
		case <-q.done:
			return
		}
	}
}
