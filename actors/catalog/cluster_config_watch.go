package catalog

import (
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The config watch is Kafka's DynamicConfigManager with its
// ZkNodeChangeNotificationListener: every broker reads all dynamic
// configs once at start, then follows /config/changes, processing each
// notification newer than the last it processed by reading the entity
// it names (the notification only says which changed) and handing the
// configs to the metadata actor. Notifications older than
// configChangeExpiry are purged after each pass, by every broker, as
// Kafka's brokers do (changeExpirationMs, 15 minutes); a broker away
// longer still catches up, since its start reads every config again.
//
// It is a goroutine, not an actor: it blocks on ZooKeeper. It is the only
// reader of configs for the actor, so the values it sends arrive in the
// order it read them and the latest read always lands last: a topic that
// LeaderAndIsr has just placed here is read again through it (refresh),
// so a change written between the LeaderAndIsr's own read and the
// hosting is not lost.
//
// Session expiry fires the watch (zkmeta closes armed watches with the
// session); the next listing then waits for the new session, re-arms the
// watch and processes what changed meanwhile. Errors are retried with
// back-off.

// configChangeExpiry is Kafka's changeExpirationMs.
const configChangeExpiry = 15 * time.Minute

// configWatch follows /config/changes for one broker.
type configWatch struct {
	store    ConfigStore
	brokerID string
	send     func(msg any)
	log      *slog.Logger
	now      func() time.Time
	stop     <-chan struct{}

	mu      sync.Mutex
	pending []string      // topics to read again (refresh)
	kick    chan struct{} // cap 1: pending has topics

	// onUsers, when set, hears every user's configs as read
	// (/config/users/<user>: SCRAM credentials, quotas), from the
	// watch's goroutine.
	onUsers func(user string, configs map[string]string)
	// onQuotas, when set, hears every quota entity's configs as read
	// (/config/users/..., /config/clients/<c>, /config/ips/<ip>; the
	// type and the name under it), from the watch's goroutine.
	onQuotas func(entityType, name string, configs map[string]string)
	// onSynced, when set, hears that every config was read once.
	onSynced func()

	last    int64                // sequence of the newest notification processed; -1 none
	created map[string]time.Time // notifications seen, by name: when made
}

func newConfigWatch(store ConfigStore, brokerID int32, send func(any), log *slog.Logger, now func() time.Time, stop <-chan struct{}) *configWatch {
	return &configWatch{store: store, brokerID: strconv.Itoa(int(brokerID)), send: send, log: log, now: now, stop: stop,
		kick: make(chan struct{}, 1), last: -1, created: map[string]time.Time{}}
}

// refresh asks for topics' configs to be read and sent again.
func (w *configWatch) refresh(topics []string) {
	if len(topics) == 0 {
		return
	}
	w.mu.Lock()
	w.pending = append(w.pending, topics...)
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// run follows the notifications until stop closes.
func (w *configWatch) run() {
	wait := backoff{min: 100 * time.Millisecond, max: 5 * time.Second}
	synced := false
	for {
		if !synced {
			if err := w.syncAll(); err != nil {
				w.log.Warn("cannot read the dynamic configs from ZooKeeper; retrying", "err", err)
				if !wait.sleep(w.stop) {
					return
				}
				continue
			}
			synced = true
			if w.onSynced != nil {
				w.onSynced()
			}
		}
		nodes, changed, err := w.store.ConfigChanges()
		if err == nil {
			err = w.process(nodes)
		}
		if err != nil {
			w.log.Warn("cannot follow the config change notifications in ZooKeeper; retrying", "err", err)
			if !wait.sleep(w.stop) {
				return
			}
			continue
		}
		wait.reset()
		w.purge(nodes)
		if !w.idle(changed) {
			return
		}
	}
}

// idle serves refreshes until the watch fires (true) or stop (false).
func (w *configWatch) idle(changed <-chan struct{}) bool {
	for {
		select {
		case <-w.stop:
			return false
		case <-changed:
			return true
		case <-w.kick:
			w.mu.Lock()
			topics := w.pending
			w.pending = nil
			w.mu.Unlock()
			for _, t := range topics {
				if err := w.apply(entityTopics, t); err != nil {
					w.log.Warn("cannot read a new topic's configs from ZooKeeper; its logs keep the ones they opened with until the next change", "topic", t, "err", err)
				}
			}
		}
	}
}

// syncAll reads every topic's configs and this broker's dynamic layers,
// as Kafka's DynamicConfigManager does at start.
func (w *configWatch) syncAll() error {
	if _, err := w.applyListed(entityTopics, entityTopics, ""); err != nil {
		return err
	}
	if err := w.apply(entityBrokers, defaultEntity); err != nil {
		return err
	}
	if err := w.syncUsers(); err != nil {
		return err
	}
	return w.apply(entityBrokers, w.brokerID)
}

// syncUsers reads every user's configs, when someone listens, and
// every other quota entity's (Kafka's fetchAllEntityConfigs and
// fetchAllChildEntityConfigs for users, clients and ips).
func (w *configWatch) syncUsers() error {
	if w.onUsers == nil && w.onQuotas == nil {
		return nil
	}
	users, err := w.applyListed(entityUsers, entityUsers, "")
	if err != nil || w.onQuotas == nil {
		return err
	}
	for _, u := range users {
		clients := u + "/" + entityClients
		if _, err := w.applyListed(entityUsers+"/"+clients, entityUsers, clients+"/"); err != nil {
			return err
		}
	}
	for _, typ := range []string{entityClients, entityIPs} {
		if _, err := w.applyListed(typ, typ, ""); err != nil {
			return err
		}
	}
	return nil
}

// applyListed applies every entity listed under /config/<dir>, as
// entityType and the name prefix+<child>, and returns the children.
func (w *configWatch) applyListed(dir, entityType, prefix string) ([]string, error) {
	names, err := w.store.EntitiesWithConfig(dir)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if err := w.apply(entityType, prefix+n); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// process handles the notifications newer than the last processed, in
// order; on an error the rest wait for the next pass.
func (w *configWatch) process(nodes []string) error {
	for _, n := range nodes {
		seq, ok := changeSeq(n)
		if !ok || seq <= w.last {
			continue
		}
		typ, name, at, err := w.store.ConfigChange(n)
		if err != nil {
			return err
		}
		if typ != "" {
			w.created[n] = at
			if err := w.apply(typ, name); err != nil {
				return err
			}
		}
		w.last = seq
	}
	return nil
}

// apply reads one entity's configs and sends them to the actor, if they
// concern this broker (topics, its own id, the cluster default); users
// go to onUsers (their SCRAM credentials), quota entities (users,
// users/<u>/clients/<c>, clients, ips) to onQuotas; other brokers'
// configs concern no one here.
func (w *configWatch) apply(entityType, name string) error {
	var msg any
	switch {
	case entityType == entityTopics:
		cfg, err := w.store.EntityConfig(entityTopics, name)
		if err != nil {
			return err
		}
		msg = &TopicConfigsChanged{Topic: name, Configs: cfg}
	case entityType == entityBrokers && (name == defaultEntity || name == w.brokerID):
		cfg, err := w.store.EntityConfig(entityBrokers, name)
		if err != nil {
			return err
		}
		msg = &BrokerConfigsChanged{ClusterDefault: name == defaultEntity, Configs: cfg}
	case entityType == entityUsers || entityType == entityClients || entityType == entityIPs:
		// users/<u>/clients/<c> are quota entities, not users.
		user := entityType == entityUsers && w.onUsers != nil && !strings.Contains(name, "/")
		if !user && w.onQuotas == nil {
			return nil
		}
		cfg, err := w.store.EntityConfig(entityType, name)
		if err != nil {
			return err
		}
		if user {
			w.onUsers(name, cfg)
		}
		if w.onQuotas != nil {
			w.onQuotas(entityType, name, cfg)
		}
		return nil
	default:
		return nil
	}
	w.send(msg)
	return nil
}

// purge removes the processed notifications older than
// configChangeExpiry and forgets those gone from the list.
func (w *configWatch) purge(nodes []string) {
	listed := make(map[string]bool, len(nodes))
	now := w.now()
	for _, n := range nodes {
		listed[n] = true
		at, ok := w.created[n]
		if !ok || now.Sub(at) <= configChangeExpiry {
			continue
		}
		if err := w.store.DeleteConfigChange(n); err != nil {
			w.log.Warn("cannot purge an old config change notification; trying after the next change", "node", n, "err", err)
			continue
		}
		delete(w.created, n)
	}
	for n := range w.created {
		if !listed[n] {
			delete(w.created, n)
		}
	}
}

// changeSeq is a notification's sequence number (config_change_<10
// digits>).
func changeSeq(node string) (int64, bool) {
	digits, ok := strings.CutPrefix(node, "config_change_")
	if !ok {
		return 0, false
	}
	seq, err := strconv.ParseInt(digits, 10, 64)
	return seq, err == nil
}

// backoff doubles a wait from min to max between failed attempts.
type backoff struct {
	min, max, cur time.Duration
}

// sleep waits the next back-off, or until stop closes (false).
func (b *backoff) sleep(stop <-chan struct{}) bool {
	b.cur = min(max(2*b.cur, b.min), b.max)
	t := time.NewTimer(b.cur)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	}
}

func (b *backoff) reset() { b.cur = 0 }
