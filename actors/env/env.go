package env

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/samsa-io/samsa/actors/acl"
	"github.com/samsa-io/samsa/actors/cluster"
	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/actors/metrics"
	"github.com/samsa-io/samsa/actors/quota"
	"github.com/samsa-io/samsa/actors/routing"
)

// Env is the broker's shared environment.
type Env struct {
	Log    *slog.Logger
	Config *config.Broker
	// Now is the clock; every pure core gets its time from here, through
	// its shell.
	Now func() time.Time
	// GatherTimeout bounds how long a request waits for actors' answers
	// (an actor that died leaves its slot empty).
	GatherTimeout time.Duration

	System     *actor.ActorSystem
	Dispatcher actor.Dispatcher // runs every actor's mailbox
	Routes     *routing.Table
	// Endpoint is the host and port clients are given (set once the
	// listeners are bound).
	Endpoint atomic.Pointer[metadata.Endpoint]
	// Endpoints, when the broker has several listeners, is each one's
	// address by listener name (single-node mode): a client is told the
	// address of the listener it came in on, as Kafka does, so that a
	// client of an SSL listener is not sent to a PLAINTEXT one.
	Endpoints atomic.Pointer[map[string]metadata.Endpoint]
	// Cluster is the cluster view in cluster mode (nil alone); the
	// metadata actor publishes it.
	Cluster *cluster.Table
	// ClientListener names the listener whose endpoints clients are
	// told (cluster mode).
	ClientListener string
	// Auth is the authorizer (authorizer.class.name); nil authorizes
	// nothing, and then every check is this one nil test.
	Auth *acl.Authorizer
	// Quotas are the client quotas (actors/quota); a nil Manager, or one
	// without quotas, throttles nothing, and then the produce and fetch
	// paths pay one check (Quotas.Enabled).
	Quotas *quota.Manager
	// Metrics are the broker's Prometheus metrics (actors/metrics); the
	// hot paths write into them without a lookup. nil counts nothing.
	Metrics *metrics.Broker
}

// Send sends msg to pid from outside any actor.
func (e *Env) Send(pid *actor.PID, msg any) { e.System.Root.Send(pid, msg) }

// BrokerID is this broker's id.
func (e *Env) BrokerID() int32 { return e.Config.BrokerID }
