// Package e2e holds end-to-end tests: real Kafka clients (franz-go kadm,
// sarama, kafka-go, kcat, and samsa's own admin CLI) against `samsa serve`
// running as its own process, started through testkit.
//
// Most tests share one broker (sharedBroker), started on first use and
// stopped with SIGTERM after the last test (a non-zero exit fails the
// run); each test makes topics with names of its own, so tests do not
// see each other's topics except through list calls. Tests that restart
// or abuse a broker start their own.
//
// Wherever samsa must behave as Apache Kafka does, the tests assert
// Kafka's error codes exactly (kerr values), and check that error messages
// are present, not their wording.
//
// Files: kadm_test.go (topics, configs, cluster through franz-go's kadm),
// kafka_edges_test.go (raw admin requests at Kafka's corner cases),
// versions_test.go (every advertised version), sarama_test.go,
// kafkago_test.go, kcat_test.go, cli_test.go (`samsa topic`),
// restart_test.go and lifecycle_test.go (restarts, crashes, shutdown,
// data-dir lock), garbage_test.go (hostile input while a good client is
// served, memory bound), pipeline_test.go (a flood of pipelined
// requests), framing_test.go (odd but legal framing).
//
// Measurements (startup time, idle memory, Metadata throughput and CPU per
// request, 2000 partitions) are in measure_test.go; they run only with
// SAMSA_MEASURE=1:
//
//	SAMSA_MEASURE=1 go test -run Measure -v ./e2e/
//
// The Kafka-facing tests were checked against Apache Kafka 4.1.1 with
// scripts/kafka-as-samsa.sh, which runs Kafka (KRaft, from interop/java's
// Maven jars) behind the serve contract; where Kafka applies a change
// asynchronously the tests wait for it (eventually) rather than expect it
// at once.
//
// A test that fails because of a reported, not yet fixed broker bug calls
// knownBug: it skips (so the suite stays green for everyone) unless
// SAMSA_E2E_STRICT=1, which runs it. The fix removes the knownBug call.
//
// To run the broker under the race detector during these tests:
//
//	SAMSA_TESTKIT_BUILD_FLAGS=-race go test ./e2e/
//
// kcat tests skip when kcat is absent, except in CI (CI=true), where
// `make test` installs it and its absence is a failure.
package e2e
