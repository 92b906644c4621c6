// Package api is the broker's Kafka APIs, one file per API: each declares
// its registration (an API value: the key and the handler) and holds the
// request-side work, splitting a request by owner, fanning its parts out
// to the actors that own them and merging their answers. It holds no
// state of its own; handlers run on the gnet loop that decoded the
// request and never block. The router (actors.Broker.Handle) looks the
// key up in ByKey.
//
// Where each API goes:
//
//   - ApiVersions: answered on the loop from wire's table.
//   - Metadata, CreateTopics, DeleteTopics, CreatePartitions,
//     DescribeConfigs, AlterConfigs, IncrementalAlterConfigs,
//     DescribeCluster, DescribeLogDirs, InitProducerId: to the metadata
//     actor (actors/catalog) as a catalog.AdminRequest.
//   - Produce, ListOffsets, DeleteRecords, OffsetForLeaderEpoch,
//     DescribeProducers: one typed partition message per partition
//     (actors/partition), fanned out and gathered by fanOut (fanout.go).
//   - Fetch: the fetch service (actors/fetch).
//   - FindCoordinator and the group APIs: the group coordinators
//     (actors/coordinator), split per coordinator and merged (groups.go).
//   - DescribeAcls, CreateAcls, DeleteAcls: the authorizer (actors/acl),
//     changes on a goroutine of their own (acls.go).
//   - SaslHandshake, SaslAuthenticate: on the loop, through the
//     connection's exchange (actors/sasl); before authentication a SASL
//     listener admits nothing else (Admit, sasl_gate.go, called by the
//     router).
//   - DescribeUserScramCredentials, AlterUserScramCredentials: the SCRAM
//     credential store (actors/sasl), alters persisted on a goroutine.
//   - DescribeClientQuotas: answered on the loop from the quota configs
//     (actors/quota); AlterClientQuotas: on a goroutine, which persists
//     the change (a file alone, ZooKeeper in a cluster) before answering.
//
// Authorization (authz*.go): with an authorizer (env.Env.Auth), each API
// checks Kafka's operations on the request's principal and host. The
// APIs that split by partition check inline (Produce, ListOffsets, ...);
// those served by the metadata actor or the coordinators go through a
// gate (gated), which answers a refused request itself or takes the
// refused topics, groups or resources out of the request and puts them
// back, with Kafka's error, into the answer (amendReply). Without an
// authorizer all of it is one nil check.
//
// Adding an API: add its row to wire.APIs with the versions served (never
// advertise an API before its handler exists), write <api>.go with its
// API value and handler, list it in All, and put the logic in a pure core
// tested there.
package api
