#!/usr/bin/env bash
# profile-samsa.sh: perf profiles of a samsa broker during Kafka's
# ProducerPerformance (acks=1, 100 B, linger 5 ms, batch 1 MiB) and during
# `samsa bench consume` from the start — how the notes in bench/results
# were made. Needs bin/samsa (make build), perf, and interop/java's
# Maven class path. Writes /tmp/samsa-prod.perf and /tmp/samsa-cons.perf;
# read them with `perf report -i FILE --children --sort symbol`.
#
#   bench/compare/profile-samsa.sh [extra samsa serve flags...]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
samsa=${SAMSA_BINARY:-$here/bin/samsa}
records=${RECORDS:-300000}
cp=$(mktemp)
(cd "$here/interop/java" && mvn -q dependency:build-classpath -Dmdep.outputFile="$cp")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
d=$(mktemp -d)
"$samsa" serve --listeners "PLAINTEXT://127.0.0.1:$port" --log.dirs "$d/data" --group.initial.rebalance.delay.ms 0 "$@" > "$d/log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid || true; rm -rf "$d" "$cp"' EXIT
until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do sleep 0.1; done
"$samsa" bench produce --bootstrap-server "127.0.0.1:$port" --topic warm --records 50000 > /dev/null
"$samsa" topic create --bootstrap-server "127.0.0.1:$port" prof --partitions 6 > /dev/null
perf record -F 999 -g -p "$pid" -o /tmp/samsa-prod.perf > /dev/null 2>&1 &
perfpid=$!
java -Xmx512m -cp "$(cat "$cp")" org.apache.kafka.tools.ProducerPerformance --topic prof --num-records "$records" \
  --record-size 100 --throughput -1 --producer-props "bootstrap.servers=127.0.0.1:$port" acks=1 linger.ms=5 batch.size=1048576 2>/dev/null | tail -1
kill -INT $perfpid; wait $perfpid || true
perf record -F 999 -g -p "$pid" -o /tmp/samsa-cons.perf > /dev/null 2>&1 &
perfpid=$!
"$samsa" bench consume --bootstrap-server "127.0.0.1:$port" --topic prof --partitions 6 --records "$records"
kill -INT $perfpid; wait $perfpid || true
