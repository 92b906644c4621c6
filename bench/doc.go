// Package bench is samsa's load generators: produce, consume and end-to-end
// latency runs against any Kafka-compatible broker, driven by franz-go
// clients. `samsa bench produce|consume|e2e` are thin front ends over
// RunProduce, RunConsume and RunE2E.
//
// What is measured:
//   - records/s and MB/s of payload (keys + values) over the whole run;
//   - produce latency (send to acknowledgement) as an HDR histogram. For a
//     fixed-rate run latency is measured from the intended send time on the
//     rate schedule, not from when the client got around to sending, so a
//     stalled broker cannot hide its stall (no coordinated omission). An
//     unpaced run records one record in eight (unpacedLatencySample);
//   - end-to-end latency (intended send time to consumer receipt; the
//     intended time travels in the first 8 bytes of each value);
//   - the broker's CPU seconds and resident memory when it is a local
//     process (found through the port it listens on, testkit/procstat);
//   - produce requests put on the wire (a kgo hook), hence requests/s and
//     broker CPU per request, which is what tells brokers apart under many
//     small requests (MaxBuffered 1: one record per request);
//   - for fixed-rate runs, the generator's own lateness: how long after its
//     intended time each record was handed to the client. It is part of
//     every latency above and no fault of the broker's.
//
// The generator keeps its own cost low (records and values are recycled
// once their promise has run, one promise serves them all, the clock read
// is the monotonic one), because on one machine its CPU is taken from the
// broker's; `--cpuprofile` profiles it.
//
// A consume run that reads nothing for Workload.IdleTimeout (10 s by
// default, `--idle-timeout`) ends with an error saying how many of the
// records asked for it read, rather than waiting for ever on a topic that
// holds fewer.
//
// RunDisk (`samsa bench disk`) needs no broker: it times a write and a
// write+fsync on the disk under a directory and reads the calling thread's
// CPU for each, the floor under a durable acknowledgement's cost.
//
// Threading: a run owns its clients and goroutines and returns when done or
// when its context ends. Results are plain values, safe to share.
package bench
