#!/usr/bin/env bash
# perf-targets.sh: the data-path performance targets of issue #4, each on
# a fresh single broker, with the default durable flush (group) and, for
# attribution, with samsa.log.flush.policy=never. Then the disk probe.
#
#   make perf-targets                 # ROUNDS=2 by default
#   ROUNDS=3 RECORDS=3000000 bash scripts/perf-targets.sh
#
# Client and broker share this machine; read figures of one run side by
# side, not against another machine's. Output: one line per run.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/samsa}
ROUNDS=${ROUNDS:-2}
RECORDS=${RECORDS:-3000000}
PORT=${PORT:-19092}
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT

start_broker() { # policy
	rm -rf "$WORK/data"
	"$BIN" serve --log.dirs "$WORK/data" --listeners "PLAINTEXT://127.0.0.1:$PORT" \
		--samsa.log.flush.policy "$1" >"$WORK/broker.log" 2>&1 &
	BROKER=$!
	for _ in $(seq 100); do
		(echo >/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && return 0
		sleep 0.1
	done
	echo "broker did not start:" >&2
	cat "$WORK/broker.log" >&2
	exit 1
}

# steal_ticks is the CPU time the hypervisor gave other guests (all CPUs,
# clock ticks): on a shared VM it says which runs to trust.
steal_ticks() { awk '/^cpu /{print $9}' /proc/stat; }

stop_broker() {
	kill "$BROKER" && wait "$BROKER" || true
}

run() { # name policy bench-args...
	local name=$1 policy=$2
	shift 2
	start_broker "$policy"
	local out
	if [[ $1 == consume ]]; then
		# Fill the topic first; the measured run reads it from the start.
		"$BIN" bench produce --bootstrap-server "127.0.0.1:$PORT" --records "$RECORDS" >/dev/null
	fi
	# The load generator's own CPU too: on one machine it bounds what
	# the broker can be shown to do.
	local s0
	s0=$(steal_ticks)
	out=$(TIMEFORMAT='client %3U user + %3S sys CPU-s'; { time "$BIN" bench "$@" --bootstrap-server "127.0.0.1:$PORT"; } 2>&1) ||
		{ echo "$name: $out" >&2; exit 1; }
	out+=$'\n'"steal $(( ($(steal_ticks) - s0) * 1000 / $(getconf CLK_TCK) )) ms of CPU taken by the hypervisor"
	stop_broker
	printf '%-28s %-6s %s\n' "$name" "$policy" "$(echo "$out" | grep -E 'throughput|latency|lateness|requests|broker|client|steal' |
		sed -E 's/ +/ /g; s/^ //' | tr '\n' '|')"
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $("$BIN" version 2>/dev/null | head -1)"
for r in $(seq "$ROUNDS"); do
	for policy in group never; do
		run "produce acks=1" "$policy" produce --records "$RECORDS"
		run "produce acks=all idempotent" "$policy" produce --records "$RECORDS" --acks all --idempotent
		run "consume" "$policy" consume --records "$RECORDS"
		run "e2e 20k/s linger 0" "$policy" e2e --rate 20000 --records 200000 --linger 0
		run "small requests x16" "$policy" produce --records 100000 --producers 16 --linger 0 --max-buffered 1
	done
done
"$BIN" bench disk --dir "$(mktemp -d -p "$WORK")" --ops 2000
