package api

import "github.com/twmb/franz-go/pkg/kmsg"

// DescribeCluster (v0-1): cluster id, this broker at its advertised
// address, and this broker as controller. Served by the metadata actor.
var describeCluster = API{Key: kmsg.DescribeCluster, Handle: gated(gateDescribeCluster, toMetadata)}
