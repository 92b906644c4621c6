#!/usr/bin/env bash
# What TLS costs against plaintext: one broker at a time (PLAINTEXT, then
# SSL with a PEM keystore), the same produce and consume workload, records/s
# and the broker's CPU seconds as `samsa bench` reads them from /proc.
# Certificates are made with openssl in a scratch directory.
#
#   go build -o /tmp/samsa ./cmd/samsa && SAMSA=/tmp/samsa N=1000000 scripts/bench-tls.sh
set -euo pipefail
S=${SAMSA:-samsa}
N=${N:-1000000}
SIZE=${SIZE:-1000}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
cd "$D"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 1 -subj /CN=bench-ca 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout broker.key -out broker.csr -subj /CN=localhost 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > san.ext
openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -extfile san.ext -out broker.crt 2>/dev/null
cat broker.key broker.crt ca.pem > keystore.pem # KIP-651 PEM keystore: key, then chain
for mode in plain ssl; do
  if [ $mode = plain ]; then
    port=19092 listener=PLAINTEXT tls=() ssl=()
  else
    port=19093 listener=SSL tls=(--tls-ca ca.pem) ssl=(--ssl.keystore.type PEM --ssl.keystore.location keystore.pem)
  fi
  "$S" serve --listeners $listener://127.0.0.1:$port --log.dirs data-$mode "${ssl[@]}" > broker-$mode.log 2>&1 &
  pid=$!
  for _ in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
  echo "== $mode produce"
  "$S" bench produce --bootstrap-server 127.0.0.1:$port "${tls[@]}" --topic t --partitions 4 --records "$N" --record-size "$SIZE"
  echo "== $mode consume"
  "$S" bench consume --bootstrap-server 127.0.0.1:$port "${tls[@]}" --topic t --partitions 4 --records "$N"
  kill $pid
  wait $pid || true
done
