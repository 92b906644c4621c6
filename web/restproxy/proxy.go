package restproxy

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/web/schemaregistry"
)

// Config says how the proxy reaches the broker.
type Config struct {
	// Brokers are the bootstrap addresses of the broker's PLAINTEXT
	// listener, through which requests without credentials act (none:
	// every request must authenticate, see SASL).
	Brokers []string
	// SASL, if set, lets requests act as their HTTP Basic user.
	SASL *SASL
	// Registry serializes AVRO, JSONSCHEMA and PROTOBUF records; nil
	// refuses them.
	Registry *schemaregistry.Registry
	Logger   *slog.Logger
	// ConsumerIdle closes a consumer instance nobody used for this long
	// (Confluent's consumer.instance.timeout.ms, default 5 minutes).
	ConsumerIdle time.Duration
}

// Proxy is the REST proxy of one broker.
type Proxy struct {
	cfg       Config
	anonymous *brokerClients // nil without a PLAINTEXT listener

	usersMu sync.Mutex
	users   map[string]*brokerClients // by user and password hash

	consumersMu sync.Mutex
	consumers   map[consumerKey]*consumer

	roundRobin atomic.Uint32 // partitions of keyless records without one chosen

	stop chan struct{}
	done chan struct{}
}

// New makes a proxy; Close releases its clients.
func New(cfg Config) (*Proxy, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ConsumerIdle <= 0 {
		cfg.ConsumerIdle = 5 * time.Minute
	}
	p := &Proxy{cfg: cfg, consumers: map[consumerKey]*consumer{}, users: map[string]*brokerClients{},
		stop: make(chan struct{}), done: make(chan struct{})}
	if len(cfg.Brokers) > 0 {
		opts := []kgo.Opt{kgo.SeedBrokers(cfg.Brokers...)}
		cl, err := kgo.NewClient(append(p.sharedOpts(), opts...)...)
		if err != nil {
			return nil, fmt.Errorf("rest proxy client: %w", err)
		}
		p.anonymous = &brokerClients{cl: cl, adm: kadm.NewClient(cl), opts: opts}
	}
	go p.reapIdleConsumers()
	return p, nil
}

// Close closes every consumer instance and the shared client.
func (p *Proxy) Close() {
	close(p.stop)
	<-p.done
	p.consumersMu.Lock()
	for k, c := range p.consumers {
		c.close()
		delete(p.consumers, k)
	}
	p.consumersMu.Unlock()
	p.closeUsers()
	if p.anonymous != nil {
		p.anonymous.cl.Close()
	}
}

// sharedOpts are the options of every client the proxy produces with.
func (p *Proxy) sharedOpts() []kgo.Opt {
	return []kgo.Opt{kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.BasicConsistentPartitioner(p.partitionFor))}
}

// clientsKey carries a request's brokerClients in its context.
type clientsKey struct{}

// clients are the request's clients (set by handler).
func clients(r *http.Request) *brokerClients { return r.Context().Value(clientsKey{}).(*brokerClients) }

// chosenPartition carries a record's requested partition in its context.
type chosenPartition struct{}

// partitionFor partitions produced records: the requested partition if
// any, else by key as Kafka's clients do (murmur2), else round robin.
func (p *Proxy) partitionFor(topic string) func(*kgo.Record, int) int {
	byKey := kgo.StickyKeyPartitioner(nil).ForTopic(topic)
	return func(r *kgo.Record, n int) int {
		if part, ok := r.Context.Value(chosenPartition{}).(int32); ok {
			return int(part)
		}
		if r.Key != nil {
			return byKey.Partition(r, n)
		}
		return int(p.roundRobin.Add(1) % uint32(n))
	}
}

// Handlers are the proxy's routes, mounted by pattern on the broker's
// HTTP server.
func (p *Proxy) Handlers() map[string]http.Handler {
	v3 := map[string]func(http.ResponseWriter, *http.Request) error{
		"GET /v3/clusters":                                                          p.listClusters,
		"GET /v3/clusters/{cluster}":                                                p.getCluster,
		"GET /v3/clusters/{cluster}/topics":                                         p.listTopics,
		"POST /v3/clusters/{cluster}/topics":                                        p.createTopic,
		"GET /v3/clusters/{cluster}/topics/{topic}":                                 p.getTopic,
		"DELETE /v3/clusters/{cluster}/topics/{topic}":                              p.deleteTopic,
		"GET /v3/clusters/{cluster}/topics/{topic}/partitions":                      p.listPartitions,
		"GET /v3/clusters/{cluster}/topics/{topic}/partitions/{partition}":          p.getPartition,
		"POST /v3/clusters/{cluster}/topics/{topic}/records":                        p.produce,
		"POST /v3/clusters/{cluster}/topics/{topic}/partitions/{partition}/records": p.produce,
	}
	v2 := map[string]func(http.ResponseWriter, *http.Request) error{
		"POST /consumers/{group}":                                     p.createConsumer,
		"DELETE /consumers/{group}/instances/{instance}":              p.onInstance(p.deleteConsumer),
		"POST /consumers/{group}/instances/{instance}/subscription":   p.onInstance(p.subscribe),
		"GET /consumers/{group}/instances/{instance}/subscription":    p.onInstance(p.subscription),
		"DELETE /consumers/{group}/instances/{instance}/subscription": p.onInstance(p.unsubscribe),
		"GET /consumers/{group}/instances/{instance}/records":         p.onInstance(p.records),
		"POST /consumers/{group}/instances/{instance}/offsets":        p.onInstance(p.commitOffsets),
		"GET /consumers/{group}/instances/{instance}/offsets":         p.onInstance(p.committedOffsets),
	}
	out := map[string]http.Handler{}
	for pattern, fn := range v3 {
		out[pattern] = p.handler(v3ContentType, fn)
	}
	for pattern, fn := range v2 {
		out[pattern] = p.handler(v2ContentType, fn)
	}
	return out
}

// requestTimeout bounds what one request may wait for the broker.
const requestTimeout = 30 * time.Second

// handler serves fn with the request's clients (its user's, or the
// anonymous ones) in its context; an authentication failure is 401.
func (p *Proxy) handler(contentType string, fn func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		c, err := p.clientsFor(r)
		if err != nil {
			if p.cfg.SASL != nil {
				w.Header().Set("WWW-Authenticate", `Basic realm="samsa"`)
			}
			writeError(w, contentType, err)
			return
		}
		if err := fn(w, r.WithContext(context.WithValue(ctx, clientsKey{}, c))); err != nil {
			writeError(w, contentType, err)
		}
	})
}

func afterRetry() <-chan time.Time { return time.After(50 * time.Millisecond) }

func contextWithTimeout(r *http.Request, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), d)
}
