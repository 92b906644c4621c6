package wiring

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/samsa-io/samsa/zkmeta"
)

// registryWriterPath is the ephemeral znode (under the cluster's chroot)
// held by the broker whose Schema Registry writes; its data is that
// registry's URL. It is samsa's own: Kafka has no such node.
const registryWriterPath = "/samsa_schema_registry_writer"

// registryElection elects the Schema Registry writer of a cluster: the
// first broker to create the ephemeral znode writes, the others forward
// writes to the URL in it; when the writer's session ends (it stopped,
// died or was cut off) the node goes and the others race to create it
// again. It implements schemaregistry.Leadership.
type registryElection struct {
	zk      *zkmeta.Client
	path    string
	selfURL string
	log     *slog.Logger

	mu     sync.Mutex
	writer string // the writer's URL; "" while none is known
	term   int64  // the node's czxid: new at every election
	self   bool
	err    error

	stop chan struct{}
	done chan struct{}
}

type registryWriterData struct {
	URL string `json:"url"`
}

func startRegistryElection(zc *zkmeta.Client, selfURL string, logger *slog.Logger) *registryElection {
	e := &registryElection{zk: zc, path: zc.Chroot() + registryWriterPath, selfURL: selfURL, log: logger,
		err: errors.New("the election has not run yet"), stop: make(chan struct{}), done: make(chan struct{})}
	go e.run()
	return e
}

// Writer implements schemaregistry.Leadership.
func (e *registryElection) Writer() (string, int64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.err != nil:
		return "", 0, e.err
	case e.self:
		return "", e.term, nil
	}
	return e.writer, e.term, nil
}

func (e *registryElection) set(writer string, term int64, self bool, err error) {
	e.mu.Lock()
	changed := e.writer != writer || e.self != self || e.term != term
	e.writer, e.term, e.self, e.err = writer, term, self, err
	e.mu.Unlock()
	if changed && err == nil {
		e.log.Info("schema registry writer", "writer", writer, "this_broker", self, "term", term)
	}
}

// run keeps the election current: create the node if it is missing, read
// and watch it, and go round again whenever it changes or the session
// does.
func (e *registryElection) run() {
	defer close(e.done)
	data, err := json.Marshal(registryWriterData{URL: e.selfURL})
	if err != nil {
		e.set("", 0, false, err)
		return
	}
	for {
		conn := e.zk.Conn() // per round: a new session may come with a new connection
		_, err := conn.Create(e.path, data, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
		var got []byte
		var st *zk.Stat
		var events <-chan zk.Event
		if err == nil || errors.Is(err, zk.ErrNodeExists) {
			got, st, events, err = conn.GetW(e.path)
			if errors.Is(err, zk.ErrNoNode) {
				continue // the writer went between the two: race for it again
			}
		}
		if err != nil {
			e.set("", 0, false, fmt.Errorf("schema registry election at %s: %w", e.path, err))
			select {
			case <-e.stop:
				return
			case <-time.After(time.Second):
			}
			continue
		}
		var w registryWriterData
		if err := json.Unmarshal(got, &w); err != nil || w.URL == "" {
			e.set("", 0, false, fmt.Errorf("%s holds %q, not a writer's URL", e.path, got))
		} else {
			self := st.EphemeralOwner == e.zk.SessionID() && w.URL == e.selfURL
			e.set(w.URL, st.Czxid, self, nil)
		}
		select {
		case <-events:
		case <-e.stop:
			return
		}
	}
}

// close stops taking part and, if this broker writes, hands the role on
// at once (deleting the node) rather than when the session times out.
func (e *registryElection) close() {
	close(e.stop)
	<-e.done
	e.mu.Lock()
	self, term := e.self, e.term
	e.mu.Unlock()
	if !self {
		return
	}
	conn := e.zk.Conn()
	if _, st, err := conn.Get(e.path); err == nil && st.Czxid == term && st.EphemeralOwner == e.zk.SessionID() {
		_ = conn.Delete(e.path, st.Version)
	}
}
