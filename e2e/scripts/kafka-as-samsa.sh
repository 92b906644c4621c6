#!/usr/bin/env bash
# kafka-as-samsa.sh: runs Apache Kafka (KRaft, one node, from the Maven
# jars of interop/java) behind the `samsa serve` contract that testkit
# drives, so the e2e tests can be checked against the real thing:
#
#   make build
#   SAMSA_BINARY=$PWD/e2e/scripts/kafka-as-samsa.sh SAMSA_TESTKIT_READY_TIMEOUT=180s \
#     go test -run 'TestKadm|Edges|EveryVersion|TestSarama|TestKafkaGo|TestKcat|TestTopicCLI$' ./e2e/
#
# `serve --listeners PLAINTEXT://127.0.0.1:PORT --log.dirs DIR` starts
# Kafka and prints samsa's listening line once it serves; SIGTERM stops it
# (exit 0). Any other command goes to the real samsa ($SAMSA_CLI, default
# bin/samsa). Kafka's own log, config and class path live in
# $TMPDIR/kafka-as-samsa/ (kept for post-mortems; remove it when done).
# Tests that read samsa's log lines (restart recovery) do not apply.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cli=${SAMSA_CLI:-$here/bin/samsa}
if [ "${1:-}" != "serve" ]; then exec "$cli" "$@"; fi
shift
listen="" dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --listeners) listen=$2; shift 2 ;;
    --log.dirs) dir=$2; shift 2 ;;
    *) shift ;;
  esac
done
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
hostport=${listen#PLAINTEXT://}
port=${hostport##*:}
[ "$port" = 0 ] && port=$(free_port)
state="${TMPDIR:-/tmp}/kafka-as-samsa/$(basename "$dir")"
mkdir -p "$dir" "$state"
[ -f "$state/controller-port" ] || free_port > "$state/controller-port"
cport=$(cat "$state/controller-port")
cat > "$state/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
num.partitions=1
PROPS

# Class path: interop/java's dependencies, with an SLF4J 2 binding so
# Kafka's errors are visible (the harness resolves SLF4J 1.7 without one).
cp_file="$state/classpath"
if [ ! -s "$cp_file" ]; then
  (cd "$here/interop/java" && mvn -q dependency:build-classpath -Dmdep.outputFile="$cp_file.raw" >&2)
  m2=${M2_REPO:-$HOME/.m2/repository}
  for a in slf4j-api slf4j-simple; do
    [ -f "$m2/org/slf4j/$a/2.0.16/$a-2.0.16.jar" ] || mvn -q dependency:get -Dartifact=org.slf4j:$a:2.0.16 >&2
  done
  { tr ':' '\n' < "$cp_file.raw" | grep -v '/slf4j-api-1\.'; echo "$m2/org/slf4j/slf4j-api/2.0.16/slf4j-api-2.0.16.jar"
    echo "$m2/org/slf4j/slf4j-simple/2.0.16/slf4j-simple-2.0.16.jar"; } | paste -sd: > "$cp_file"
fi
cp=$(cat "$cp_file")
jopts=(-Xmx512m -XX:+UseSerialGC -Dorg.slf4j.simpleLogger.defaultLogLevel=warn)
if [ ! -f "$dir/meta.properties" ]; then
  id=$(java "${jopts[@]}" -cp "$cp" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)
  java "${jopts[@]}" -cp "$cp" kafka.tools.StorageTool format -t "$id" -c "$state/server.properties" > "$state/format.log" 2>&1 ||
    { cat "$state/format.log" >&2; exit 1; }
fi
java "${jopts[@]}" -cp "$cp" kafka.Kafka "$state/server.properties" > "$state/kafka.log" 2>&1 &
kafka=$!
trap 'kill -TERM $kafka; wait $kafka || true; exit 0' TERM INT
until "$cli" topic list --bootstrap-server "127.0.0.1:$port" --timeout 1s > /dev/null 2>&1; do
  if ! kill -0 "$kafka" 2> /dev/null; then tail -40 "$state/kafka.log" >&2; exit 1; fi
  sleep 0.2
done
echo "samsa: listening on 127.0.0.1:$port (PLAINTEXT), data in $dir" >&2
wait "$kafka"
