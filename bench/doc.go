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
//     stalled broker cannot hide its stall (no coordinated omission);
//   - end-to-end latency (intended send time to consumer receipt; the
//     intended time travels in the first 8 bytes of each value);
//   - the broker's CPU seconds and resident memory when it is a local
//     process (found through the port it listens on, testkit/procstat).
//
// Threading: a run owns its clients and goroutines and returns when done or
// when its context ends. Results are plain values, safe to share.
package bench
