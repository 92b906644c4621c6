package actors

import (
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/metadata"
	"github.com/samsa-io/samsa/wire"
)

// route says where a request goes. Exactly one field is set.
type route struct {
	// direct answers on the caller's goroutine (a gnet loop): it must not
	// block, touch disk or wait for an actor.
	direct func(b *Broker, req *wire.Request)
	// meta runs inside the metadata actor.
	meta func(a *metadataActor, req *wire.Request)
}

// routesByKey is the dispatch table: one entry per served API key, one
// file (handle_<api>.go) per handler. It must list exactly the keys of
// wire.APIs that the broker serves.
var routesByKey = map[int16]route{
	int16(kmsg.ApiVersions):             {direct: handleApiVersions},
	int16(kmsg.Metadata):                {meta: (*metadataActor).handleMetadata},
	int16(kmsg.CreateTopics):            {meta: (*metadataActor).handleCreateTopics},
	int16(kmsg.DeleteTopics):            {meta: (*metadataActor).handleDeleteTopics},
	int16(kmsg.CreatePartitions):        {meta: (*metadataActor).handleCreatePartitions},
	int16(kmsg.DescribeConfigs):         {meta: (*metadataActor).handleDescribeConfigs},
	int16(kmsg.AlterConfigs):            {meta: (*metadataActor).handleAlterConfigs},
	int16(kmsg.IncrementalAlterConfigs): {meta: (*metadataActor).handleIncrementalAlterConfigs},
	int16(kmsg.DescribeCluster):         {meta: (*metadataActor).handleDescribeCluster},
	int16(kmsg.DescribeLogDirs):         {meta: (*metadataActor).handleDescribeLogDirs},
	int16(kmsg.Fetch):                   {direct: handleFetch},
	int16(kmsg.Produce):                 {direct: handleProduce},
	int16(kmsg.ListOffsets):             {direct: handleListOffsets},
	int16(kmsg.DeleteRecords):           {direct: handleDeleteRecords},
	int16(kmsg.OffsetForLeaderEpoch):    {direct: handleOffsetForLeaderEpoch},
	int16(kmsg.InitProducerID):          {meta: (*metadataActor).handleInitProducerID},
}

// Handle routes one decoded request. It is called on a gnet event loop and
// never blocks: it answers directly or sends the request to the actor
// that owns it, which replies through req.Reply.
func (b *Broker) Handle(req *wire.Request) {
	r, ok := routesByKey[req.Header.APIKey]
	switch {
	case !ok:
		// wire only decodes keys of its API table; a key without a route
		// is a table mismatch. No response would desynchronise the
		// client, so answer nothing and let netloop move on.
		b.log.Error("no route for API; the wire table and the router disagree", "api", wire.APIName(req.Header.APIKey), "client", req.ClientAddr)
		req.Reply(nil)
	case r.direct != nil:
		r.direct(b, req)
	default:
		// A handler that panics after answering must not answer twice
		// (netloop's contract is exactly once); admin requests are rare
		// enough to afford the guard.
		reply, once := req.Reply, new(atomic.Bool)
		req.Reply = func(r *wire.Response) {
			if once.CompareAndSwap(false, true) {
				reply(r)
			}
		}
		b.system.Root.Send(b.meta, &adminRequest{req: req, handle: r.meta})
	}
}

// adminRequest carries a request to the metadata actor.
type adminRequest struct {
	req    *wire.Request
	handle func(a *metadataActor, req *wire.Request)
}

// reply encodes resp as the answer to req and hands it to netloop. The
// buffer starts at the size of the last response of the same API, so a
// large answer (Metadata for every topic) is not grown step by step.
func reply(req *wire.Request, resp kmsg.Response) {
	key := req.Header.APIKey
	hint := 256
	if key >= 0 && int(key) < len(sizeHints) {
		hint = max(hint, int(sizeHints[key].Load()))
	}
	b := wire.AppendResponse(make([]byte, 0, hint), req.Header.CorrelationID, resp)
	if key >= 0 && int(key) < len(sizeHints) {
		sizeHints[key].Store(int32(min(len(b), 1<<20)))
	}
	req.Reply(&wire.Response{Chunks: []wire.Chunk{{Bytes: b}}})
}

// sizeHints is the last encoded response size per API key.
var sizeHints [128]atomic.Int32

// Routes is the published, immutable map from topic to the partition
// actors that own its partitions. The metadata actor replaces it after
// every change; the router reads it without locks (produce and fetch use
// it to reach partition actors directly).
type Routes struct {
	ClusterID string
	Topics    map[string]*TopicRoute
}

// TopicRoute is one topic's partition actors, by partition index.
type TopicRoute struct {
	Name       string
	ID         metadata.TopicID
	Partitions []*actor.PID
	views      []*partitionView // by partition, beside Partitions (partition_view.go)
}

// view returns the published view of a partition, or nil.
func (t *TopicRoute) view(partition int32) *partitionView {
	if partition < 0 || int(partition) >= len(t.views) {
		return nil
	}
	return t.views[partition]
}

// Partition returns the actor owning topic/partition.
func (r *Routes) Partition(topic string, partition int32) (*actor.PID, bool) {
	t, ok := r.Topics[topic]
	if !ok || partition < 0 || int(partition) >= len(t.Partitions) || t.Partitions[partition] == nil {
		return nil, false
	}
	return t.Partitions[partition], true
}

// Routes returns the current routing table.
func (b *Broker) Routes() *Routes { return b.routes.Load() }
