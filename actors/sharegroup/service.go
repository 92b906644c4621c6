package sharegroup

import (
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/actors/env"
	"github.com/samsa-io/samsa/wire/kerr"
)

// Service is the broker's share coordinator: one actor, started with the
// broker, that the share APIs (actors/api) send their requests to.
type Service struct {
	env *env.Env
	pid *actor.PID
}

// ConfigFrom reads the share settings from the broker's configs.
func ConfigFrom(b *config.Broker) Config {
	ms := func(name string, def time.Duration) time.Duration {
		n, err := strconv.ParseInt(b.Value(name), 10, 64)
		if err != nil || n <= 0 {
			return def
		}
		return time.Duration(n) * time.Millisecond
	}
	limit, err := strconv.Atoi(b.Value("group.share.delivery.count.limit"))
	if err != nil || limit <= 0 {
		limit = int(DefaultLimits.DeliveryLimit)
	}
	records, err := strconv.ParseInt(b.Value("group.share.partition.max.record.locks"), 10, 64)
	if err != nil || records <= 0 {
		records = DefaultLimits.MaxInFlight
	}
	return Config{
		Limits: Limits{
			LockDuration:  ms("group.share.record.lock.duration.ms", DefaultLimits.LockDuration),
			DeliveryLimit: int16(min(limit, 1<<15-1)),
			MaxInFlight:   records,
		},
		SessionTimeout:    ms("group.share.session.timeout.ms", 45*time.Second),
		HeartbeatInterval: ms("group.share.heartbeat.interval.ms", 5*time.Second),
		Tick:              time.Second,
	}
}

// Start spawns the share coordinator; meta is the metadata actor (it
// creates the state topic).
func Start(e *env.Env, meta *actor.PID, cfg Config) (*Service, error) {
	props := actor.PropsFromProducer(func() actor.Actor {
		a := newActor(e, cfg).(*coordinatorActor)
		a.meta = meta
		return a
	}, actor.WithDispatcher(e.Dispatcher))
	pid, err := e.System.Root.SpawnNamed(props, "share-coordinator")
	if err != nil {
		return nil, err
	}
	return &Service{env: e, pid: pid}, nil
}

// Handle sends a share request to the coordinator. A broker without one
// (cluster mode, in a process whose other broker runs alone and so
// decodes the share APIs) answers COORDINATOR_NOT_AVAILABLE.
func (s *Service) Handle(c *Call) {
	if s == nil {
		replyError(c, kerr.CoordinatorNotAvailable)
		return
	}
	s.env.Send(s.pid, c)
}

// reply answers c once touched share partitions are durable: nothing
// acknowledged is reported done before it would survive a restart.
func (a *coordinatorActor) reply(c *Call, resp kmsg.Response, touched map[partKey]bool) {
	a.persist(touched, func(code kerr.Code) {
		if code != kerr.None {
			a.env.Log.Error("sharegroup: share state not written", "topic", StateTopic, "err", code)
			setErrorCode(resp, code)
		}
		env.Reply(c.Req, resp)
	})
}

// setErrorCode sets the top-level error code of a share API response
// that has one, and reports whether it had.
func setErrorCode(resp kmsg.Response, code kerr.Code) bool {
	switch r := resp.(type) {
	case *kmsg.ShareGroupHeartbeatResponse:
		r.ErrorCode = int16(code)
	case *kmsg.ShareFetchResponse:
		r.ErrorCode = int16(code)
	case *kmsg.ShareAcknowledgeResponse:
		r.ErrorCode = int16(code)
	case *kmsg.AlterShareGroupOffsetsResponse:
		r.ErrorCode = int16(code)
	case *kmsg.DeleteShareGroupOffsetsResponse:
		r.ErrorCode = int16(code)
	default:
		return false
	}
	return true
}

// replyError answers a share request with code.
func replyError(c *Call, code kerr.Code) {
	resp := c.Req.Body.ResponseKind()
	resp.SetVersion(c.Req.Body.GetVersion())
	if setErrorCode(resp, code) {
		env.Reply(c.Req, resp)
		return
	}
	// The describe APIs have no top-level code: each group gets it.
	switch r := resp.(type) {
	case *kmsg.DescribeShareGroupOffsetsResponse:
		for _, g := range c.Req.Body.(*kmsg.DescribeShareGroupOffsetsRequest).Groups {
			out := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
			out.GroupID, out.ErrorCode = g.GroupID, int16(code)
			r.Groups = append(r.Groups, out)
		}
	case *kmsg.ShareGroupDescribeResponse:
		for _, id := range c.Req.Body.(*kmsg.ShareGroupDescribeRequest).GroupIDs {
			g := kmsg.NewShareGroupDescribeResponseGroup()
			g.GroupID, g.ErrorCode = id, int16(code)
			r.Groups = append(r.Groups, g)
		}
	}
	env.Reply(c.Req, resp)
}
