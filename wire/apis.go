package wire

import "github.com/twmb/franz-go/pkg/kmsg"

// APIRange is one row of the broker's API table: the versions of an API it
// advertises in ApiVersions. Accept may be higher than Min: a version in
// [Min, Accept) is advertised for client feature detection but refused (see
// the Produce row).
type APIRange struct {
	Key    int16
	Min    int16 // advertised minimum
	Max    int16 // advertised and accepted maximum
	Accept int16 // lowest version actually accepted (>= Min)
}

// APIs is the one table that both builds the ApiVersions response and
// decides which request versions are accepted. A key absent here is not
// implemented: it is neither advertised nor accepted. Ranges follow
// reference/kafka-protocol.md §1d so that every mainstream client
// negotiates a version it speaks.
//
// Rows are added as the broker implements the API; advertising an API the
// broker does not serve makes clients use it (Java's telemetry is the
// textbook case), so never list one ahead of its handler.
var APIs = []APIRange{
	{Key: 3, Min: 0, Max: 12, Accept: 0},  // Metadata
	{Key: 18, Min: 0, Max: 4, Accept: 0},  // ApiVersions
	{Key: 19, Min: 2, Max: 7, Accept: 2},  // CreateTopics
	{Key: 20, Min: 1, Max: 6, Accept: 1},  // DeleteTopics
	{Key: 32, Min: 1, Max: 4, Accept: 1},  // DescribeConfigs
	{Key: 33, Min: 0, Max: 2, Accept: 0},  // AlterConfigs
	{Key: 35, Min: 1, Max: 4, Accept: 1},  // DescribeLogDirs
	{Key: 37, Min: 0, Max: 3, Accept: 0},  // CreatePartitions
	{Key: 44, Min: 0, Max: 1, Accept: 0},  // IncrementalAlterConfigs
	{Key: 60, Min: 0, Max: 1, Accept: 0},  // DescribeCluster
}

var apiByKey = func() map[int16]APIRange {
	m := make(map[int16]APIRange, len(APIs))
	for _, a := range APIs {
		m[a.Key] = a
	}
	return m
}()

// LookupAPI returns the table row for key.
func LookupAPI(key int16) (APIRange, bool) {
	a, ok := apiByKey[key]
	return a, ok
}

// Accepts reports whether the broker accepts requests of this key and
// version.
func Accepts(key, version int16) bool {
	a, ok := apiByKey[key]
	return ok && version >= a.Accept && version <= a.Max
}

// APIName is the protocol name of an API key, for logs.
func APIName(key int16) string { return kmsg.NameForKey(key) }
