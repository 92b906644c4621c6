// Command interop runs real Kafka clients against `samsa serve`, one
// broker and a cluster, and writes the compatibility matrix,
// docs/compatibility.md (all but its last section, "Inter-broker
// compatibility", which it keeps as it was: e2e/mixed's results, kept.go).
// `make interop` runs it from the repository root with -cluster 0,3:
//
//	go run ./e2e/interop [-cluster 0|N|0,3] [-count 10000] [-clients franz-go,kafkajs] [-broker HOST:PORT[,HOST:PORT...]] [-out docs/compatibility.md]
//
// # What runs
//
// -cluster lists the runs, each a table of the matrix: 0 (the default) is
// one broker in single-node mode (testkit.LaunchBroker), N ≥ 1 a cluster
// of N `samsa serve` brokers on a ZooKeeper the runner starts
// (testkit.LaunchCluster, Kind Samsa; it needs `make deps`' zookeeper).
// A cluster run differs from the single broker only in what the clients
// must find on their own: every checker gets all N addresses as its
// bootstrap list, the runner's topics have replication factor min(3, N)
// with leaders spread over the brokers, so producers and consumers must
// route by Metadata (a follower answers NOT_LEADER_OR_FOLLOWER) and
// groups find their coordinator, the leader of the group's
// __consumer_offsets partition, through FindCoordinator. Followers do not
// replicate yet (issue #17), which no run notices: no broker fails. -broker
// runs against brokers already running instead (a list of several gets
// RF min(3, addresses) topics).
//
// In each run, each client in turn, on its own topics prefix-<codec>
// (none, gzip, snappy, lz4, zstd) and prefix-idem, 3 partitions each,
// which the runner creates first:
//
//   - in this process: franz-go, sarama, kafka-go (scenario.go and one file
//     per library);
//   - checkers in other languages that print RESULT lines (external.go):
//     Java kafka-clients (interop/java, Main's "matrix" command, Matrix.java),
//     confluent-kafka and kafka-python (interop/python/check.py), kafkajs
//     (interop/node/check.js);
//   - kcat and Apache Kafka's command-line tools (tools.go).
//
// Each client produces -count records per codec topic and a tenth of that
// with its idempotent producer, consumes all of them in one consumer group
// committing after each poll, and checks every record's key, value,
// headers, timestamp and offset against the record spec (records.go) and
// against where the producer was told it landed; then the group's committed
// offsets must equal the partitions' ends, and the admin calls run
// (create, describe, list, describe configs, delete a topic: a
// 2-partition topic of replication factor 1, which in a cluster lives on
// some brokers only; the describe waits, up to 15 s, until the topic shows
// in Metadata, since brokers learn of a new topic from the controller
// after CreateTopics answers, in Kafka too). Clients with a transactional
// producer then run the transactions scenario on prefix-txn
// (transactions.go): commit, abort, commit, and their own read_committed
// consumer must read exactly the committed records; the runner reads the
// topic again with franz-go under both isolation levels.
//
// The sasl_ssl column (secure.go, secure_clients.go, secure_go.go): the
// single broker also listens SASL_SSL, with a PEM keystore issued by a CA
// made for the run (netloop/tlsconf/tlstest), and the runner makes a
// SCRAM-SHA-512 user through the PLAINTEXT listener
// (AlterUserScramCredentials) before any client runs. After its main run
// each client connects there trusting the CA, produces a hundredth of
// -count records (1 to 100) to prefix-sasl and consumes them back in a
// group, committing; the external checkers do so in a mode of their own
// (Main's "sasl-ssl", check.py CLIENT:sasl_ssl, check.js --sasl-ssl). In
// a cluster run the SASL_SSL listener is each broker's first
// (testkit.ClusterConfig.Listener) and the brokers' inter-broker one, PLAIN
// between brokers, so all the run's replication and controller traffic
// goes over TLS and SASL; the checkers' main runs use a second, PLAINTEXT
// listener (ExtraListener), and the sasl_ssl steps bootstrap from the
// first broker's SASL_SSL address.
//
// # The checker contract
//
// A checker is run as `CHECKER BOOTSTRAP PREFIX COUNT` and prints
//
//	VERSION <client and version>
//	RESULT <feature> PASS|FAIL|LIMIT <detail>
//
// one RESULT line per feature of the matrix (results.go: produce, consume,
// group, commit, admin, codec:<name>, idempotence, headers, transactions;
// sasl_ssl comes from the separate step above).
// FAIL's detail is the client's own error; LIMIT marks what the client
// lacks against Apache Kafka too (kafkajs has no built-in lz4/zstd,
// kafka-go no idempotent or transactional producer); kcat and the CLI
// tools are not asked about transactions (—). Anything else a checker prints is log, shown when
// a feature fails.
//
// # Installing the clients
//
// Each external client is installed from the project's own files when its
// output is missing or older than them: `python3 -m venv` and `pip install
// -r requirements.txt` in interop/python/.venv, `npm ci` in interop/node
// (package-lock.json pins kafkajs 2.2.4), `mvn package` in interop/java.
// All outputs are gitignored.
//
// # Exit status
//
// 0 when no feature failed in any run, 1 when one did (the matrix is
// still written), 2 when a run itself could not happen (no broker, no
// ZooKeeper). The last line of output counts the cells of all runs:
// "interop: P passed, F failed, S skipped".
package main
