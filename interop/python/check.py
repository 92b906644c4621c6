#!/usr/bin/env python3
"""Interop checker for samsa: kafka-python or confluent-kafka (librdkafka).

Usage:
    check.py kafka-python|confluent-kafka BOOTSTRAP PREFIX COUNT
    check.py kafka-python:sasl_ssl|confluent-kafka:sasl_ssl ...   (see sasl_ssl.py)

The runner (interop/runner) has created the topics PREFIX-<codec> for
every codec, PREFIX-idem and PREFIX-txn, each with 3 partitions. This script:

  1. produces COUNT records to each codec topic with that compression, and
     COUNT/10 records to PREFIX-idem with an idempotent producer;
  2. consumes every topic in one consumer group, committing after each
     poll, and checks each record against what was sent and where the
     producer was told it landed: key, value, headers, timestamp, offset;
  3. checks the group's committed offsets equal the partitions' ends;
  4. runs the admin calls: create, describe, describe configs, delete;
  5. runs the transactions scenario on PREFIX-txn (see "transactions").

Record i (the same in every checker of the matrix):
  key       b"key-<i>" when i is even, no key (null) when odd
  value     b"value-<i>-" then filler 'a'+(i+j)%26 up to 100 bytes
  headers   [("seq", b"<i>"), ("client", b"<client>"), ("pad", b"x"*(i%3))]
  timestamp 1700000000000 + i (create time)

Output: "VERSION <text>" and one "RESULT <feature> PASS|FAIL|LIMIT <detail>"
line per feature; the client's own error text is in the detail. Exit
status is 0 even when features fail: the runner reads the lines.
"""

import sys
import time
import traceback

TS0 = 1700000000000
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
PARTITIONS = 3
TIMEOUT_S = 90


def key_of(i):
    return b"key-%d" % i if i % 2 == 0 else None


def value_of(i):
    prefix = b"value-%d-" % i
    return prefix + bytes(ord("a") + (i + j) % 26 for j in range(len(prefix), 100))


def headers_of(i, client):
    return [("seq", b"%d" % i), ("client", client.encode()), ("pad", b"x" * (i % 3))]


def result(feature, status, detail=""):
    detail = " ".join(str(detail).split())[:600]
    print("RESULT %s %s %s" % (feature, status, detail), flush=True)


class Verifier:
    """Checks consumed records against the produced (partition, offset) of each."""

    def __init__(self, client, placed, counts):
        self.client = client
        self.placed = placed  # topic -> list of (partition, offset) by i
        self.counts = counts  # topic -> records expected
        self.seen = {t: set() for t in counts}
        self.errors = []  # (feature, message)
        self.header_errors = 0

    def done(self):
        return all(len(self.seen[t]) >= n for t, n in self.counts.items())

    def error(self, feature, msg):
        if len(self.errors) < 20:
            self.errors.append((feature, msg))

    def check(self, topic, partition, offset, key, value, headers, ts_type_ok, ts):
        at = "%s[%d]@%d" % (topic, partition, offset)
        hdrs = [(k, bytes(v) if v is not None else b"") for k, v in (headers or [])]
        seq = [v for k, v in hdrs if k == "seq"]
        if len(seq) != 1:
            self.header_errors += 1
            self.error("headers", "%s: headers %r have no single seq" % (at, hdrs))
            return
        i = int(seq[0])
        if topic not in self.counts or not 0 <= i < self.counts[topic]:
            self.error("consume", "%s: unexpected record seq %d" % (at, i))
            return
        if i in self.seen[topic]:
            self.error("consume", "%s: record %d delivered twice" % (at, i))
            return
        self.seen[topic].add(i)
        if hdrs != headers_of(i, self.client):
            self.header_errors += 1
            self.error("headers", "%s: record %d headers %r" % (at, i, hdrs))
        if key != key_of(i):
            self.error("consume", "%s: record %d key %r" % (at, i, key))
        if value != value_of(i):
            self.error("consume", "%s: record %d value %r" % (at, i, value[:40] if value else value))
        if not ts_type_ok or ts != TS0 + i:
            self.error("consume", "%s: record %d timestamp %r (create time %s), want %d"
                       % (at, i, ts, ts_type_ok, TS0 + i))
        want = self.placed.get(topic, {}).get(i)
        if want is not None and want != (partition, offset):
            self.error("consume", "%s: record %d was acked at partition %d offset %d"
                       % (at, i, want[0], want[1]))


# ---------------------------------------------------------------- kafka-python

def kp_produce(bootstrap, topic, count, codec, idempotent, placed):
    from kafka import KafkaProducer
    cfg = dict(bootstrap_servers=bootstrap, acks="all", linger_ms=5,
               request_timeout_ms=30000, compression_type=None if codec == "none" else codec)
    if idempotent:
        cfg["enable_idempotence"] = True
    p = KafkaProducer(**cfg)
    try:
        futs = []
        for i in range(count):
            futs.append(p.send(topic, value=value_of(i), key=key_of(i),
                               headers=headers_of(i, "kafka-python"), timestamp_ms=TS0 + i))
        p.flush(timeout=60)
        where = {}
        for i, f in enumerate(futs):
            md = f.get(timeout=30)
            where[i] = (md.partition, md.offset)
        placed[topic] = where
    finally:
        p.close(timeout=10)


def kp_consume(bootstrap, group, v):
    from kafka import KafkaConsumer, TopicPartition
    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                      auto_offset_reset="earliest", consumer_timeout_ms=1000)
    commit_err = None
    try:
        c.subscribe(list(v.counts))
        deadline = time.time() + TIMEOUT_S
        assigned = False
        while not v.done() and time.time() < deadline:
            batch = c.poll(timeout_ms=500)
            if c.assignment():
                assigned = True
            n = 0
            for tp, recs in batch.items():
                for r in recs:
                    n += 1
                    v.check(r.topic, r.partition, r.offset, r.key, r.value, r.headers,
                            r.timestamp_type == 0, r.timestamp)
            if n:
                try:
                    c.commit()
                except Exception as e:  # the client's own error
                    commit_err = commit_err or repr(e)
        tps = [TopicPartition(t, p) for t in v.counts for p in range(PARTITIONS)]
        ends = c.end_offsets(tps)
        committed = {}
        for tp in tps:
            committed[tp] = c.committed(tp)
        bad = ["%s[%d] committed %s end %s" % (tp.topic, tp.partition, committed[tp], ends[tp])
               for tp in tps if committed[tp] != ends[tp]]
        if commit_err is None and bad:
            commit_err = "; ".join(bad[:5])
        return assigned, commit_err
    finally:
        c.close()


def until_visible(look, ok, timeout=15.0):
    """Calls look, the Metadata reads (describe, list) of a topic just
    created, until it returns what ok accepts without raising, for up to
    timeout seconds, and returns that. In a cluster the brokers other than
    the one that took CreateTopics learn of the topic from the controller a
    little later, so a read may reach one that has not; an application waits
    as this does. describe_configs is left out: a broker that knows the topic
    must answer it."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            got = look()
            if ok(got) or time.monotonic() > deadline:
                return got
        except Exception:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.1)


def kp_admin(bootstrap, topic):
    from kafka.admin import KafkaAdminClient, NewTopic, ConfigResource, ConfigResourceType
    a = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        step = "create_topics"
        a.create_topics([NewTopic(topic, 2, 1)])
        step = "describe_topics"
        d, names = until_visible(lambda: (a.describe_topics([topic]), a.list_topics()),
                                 lambda r: r[0] and not r[0][0].get("error_code") and r[0][0]["partitions"] and topic in r[1])
        parts = len(d[0]["partitions"])
        if parts != 2:
            return "describe_topics: %d partitions, want 2 (%r)" % (parts, d)
        step = "list_topics"
        if topic not in names:
            return "list_topics misses %s" % topic
        step = "describe_configs"
        cr = a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)], config_filter="all")
        text = repr(cr)
        if "retention.ms" not in text:
            # kafka-python drops the resource's error code: an empty dict
            # is how an error (UNKNOWN_TOPIC_OR_PARTITION, ...) shows.
            return "describe_configs: no retention.ms in %s (kafka-python shows no error code)" % text[:300]
        step = "delete_topics"
        a.delete_topics([topic])
        return None
    except Exception as e:
        return "%s: %r" % (step, e)
    finally:
        a.close()


# ---------------------------------------------------------------- confluent-kafka

def ck_produce(bootstrap, topic, count, codec, idempotent, placed):
    from confluent_kafka import Producer
    cfg = {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5,
           "compression.type": codec, "enable.idempotence": idempotent}
    p = Producer(cfg)
    where, errs = {}, []

    def make_cb(i):
        def cb(err, msg):
            if err is not None:
                errs.append("record %d: %s" % (i, err))
            else:
                where[i] = (msg.partition(), msg.offset())
        return cb

    for i in range(count):
        while True:
            try:
                p.produce(topic, value=value_of(i), key=key_of(i),
                          headers=headers_of(i, "confluent-kafka"), timestamp=TS0 + i,
                          on_delivery=make_cb(i))
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    left = p.flush(60)
    if left:
        raise RuntimeError("%d records not delivered after 60 s" % left)
    if errs:
        raise RuntimeError("; ".join(errs[:3]))
    placed[topic] = where


def ck_consume(bootstrap, group, v):
    from confluent_kafka import Consumer, TopicPartition, TIMESTAMP_CREATE_TIME
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    commit_err = None
    try:
        c.subscribe(list(v.counts))
        deadline = time.time() + TIMEOUT_S
        assigned = False
        while not v.done() and time.time() < deadline:
            msgs = c.consume(num_messages=1000, timeout=0.5)
            if c.assignment():
                assigned = True
            n = 0
            for m in msgs:
                if m.error():
                    v.error("consume", "consume error: %s" % m.error())
                    continue
                n += 1
                tstype, ts = m.timestamp()
                v.check(m.topic(), m.partition(), m.offset(), m.key(), m.value(), m.headers(),
                        tstype == TIMESTAMP_CREATE_TIME, ts)
            if n:
                try:
                    c.commit(asynchronous=False)
                except Exception as e:
                    commit_err = commit_err or repr(e)
        tps = [TopicPartition(t, p) for t in v.counts for p in range(PARTITIONS)]
        committed = c.committed(tps, timeout=10)
        bad = []
        for tp in committed:
            lo, hi = c.get_watermark_offsets(TopicPartition(tp.topic, tp.partition), timeout=10)
            if tp.offset != hi:
                bad.append("%s[%d] committed %d end %d" % (tp.topic, tp.partition, tp.offset, hi))
        if commit_err is None and bad:
            commit_err = "; ".join(bad[:5])
        return assigned, commit_err
    finally:
        c.close()


def ck_admin(bootstrap, topic):
    from confluent_kafka import TopicCollection
    from confluent_kafka.admin import AdminClient, NewTopic, ConfigResource
    a = AdminClient({"bootstrap.servers": bootstrap})
    step = "create_topics"
    try:
        a.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])[topic].result(30)
        step = "describe_topics"
        d, names = until_visible(lambda: (a.describe_topics(TopicCollection([topic]))[topic].result(30),
                                          a.list_topics(timeout=30).topics),
                                 lambda r: topic in r[1])
        if len(d.partitions) != 2:
            return "describe_topics: %d partitions, want 2" % len(d.partitions)
        step = "list_topics"
        if topic not in names:
            return "list_topics misses %s" % topic
        step = "describe_configs"
        res = ConfigResource("topic", topic)
        cfg = a.describe_configs([res])[res].result(30)
        if "retention.ms" not in cfg:
            return "describe_configs: no retention.ms in %s" % sorted(cfg)[:10]
        step = "delete_topics"
        a.delete_topics([topic])[topic].result(30)
        return None
    except Exception as e:
        return "%s: %r" % (step, e)


# ---------------------------------------------------------------- transactions
#
# The transactions scenario (e2e/interop/transactions.go): on PREFIX-txn,
# transactional.id PREFIX-txn-id, three transactions of k records
# (records 0..3k-1), the middle one aborted after a flush (its records are
# in the log); then a read_committed consumer of every partition, from the
# start, must read exactly records [0,k) and [2k,3k).

def txn_check(values, k):
    want = {value_of(i): i for i in range(3 * k)}
    seen, errs = set(), []
    for val in values:
        i = want.get(val)
        if i is None:
            errs.append("a record not sent: %r" % val[:30])
        elif i // k == 1:
            errs.append("record %d of the aborted transaction" % i)
        elif i in seen:
            errs.append("record %d twice" % i)
        else:
            seen.add(i)
    if len(seen) != 2 * k:
        errs.append("%d of the %d committed records read" % (len(seen), 2 * k))
    return "read_committed: " + "; ".join(errs[:3]) if errs else None


def kp_transactions(bootstrap, topic, k, client="kafka-python"):
    from kafka import KafkaProducer, KafkaConsumer, TopicPartition
    p = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=topic + "-id")
    try:
        p.init_transactions()
        for t in range(3):
            p.begin_transaction()
            for i in range(t * k, (t + 1) * k):
                p.send(topic, key=key_of(i), value=value_of(i), headers=headers_of(i, client), timestamp_ms=TS0 + i)
            p.flush()
            if t == 1:
                p.abort_transaction()
            else:
                p.commit_transaction()
    finally:
        p.close()
    c = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed", enable_auto_commit=False)
    try:
        tps = [TopicPartition(topic, i) for i in range(PARTITIONS)]
        c.assign(tps)
        c.seek_to_beginning(*tps)
        return txn_read(lambda: [r.value for recs in c.poll(timeout_ms=500).values() for r in recs], k)
    finally:
        c.close()


def ck_transactions(bootstrap, topic, k, client="confluent-kafka"):
    from confluent_kafka import Producer, Consumer, TopicPartition, OFFSET_BEGINNING
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": topic + "-id"})
    p.init_transactions(30)
    for t in range(3):
        p.begin_transaction()
        for i in range(t * k, (t + 1) * k):
            p.produce(topic, key=key_of(i), value=value_of(i), headers=headers_of(i, client), timestamp=TS0 + i)
        if p.flush(30) != 0:
            raise RuntimeError("transaction %d: records left unsent after flush" % t)
        if t == 1:
            p.abort_transaction(30)
        else:
            p.commit_transaction(30)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": topic + "-reader", "isolation.level": "read_committed",
                  "enable.auto.commit": False})
    try:
        c.assign([TopicPartition(topic, i, OFFSET_BEGINNING) for i in range(PARTITIONS)])

        def poll():
            out = []
            for m in c.consume(num_messages=1000, timeout=0.5):
                if m.error():
                    raise RuntimeError("read_committed consumer: %s" % m.error())
                out.append(m.value())
            return out
        return txn_read(poll, k)
    finally:
        c.close()


def txn_read(poll, k):
    """Polls until 2k records came and then two quiet polls (so extra
    records show), or 60 s; returns the values read."""
    values, quiet, deadline = [], 0, time.time() + 60
    while quiet < 2 and time.time() < deadline:
        got = poll()
        values.extend(got)
        if not got and len(values) >= 2 * k:
            quiet += 1
    return values


# ---------------------------------------------------------------- driver

def main():
    if len(sys.argv) == 9 and sys.argv[1] in ("kafka-python:sasl_ssl", "confluent-kafka:sasl_ssl"):
        import sasl_ssl
        sasl_ssl.run(sys.argv[1].split(":")[0], sys.argv[2:], result)
        return
    if len(sys.argv) != 5 or sys.argv[1] not in ("kafka-python", "confluent-kafka"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    client, bootstrap, prefix, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    if client == "kafka-python":
        import kafka
        print("VERSION kafka-python %s" % kafka.__version__, flush=True)
        produce, consume, admin, transactions = kp_produce, kp_consume, kp_admin, kp_transactions
    else:
        import confluent_kafka
        print("VERSION confluent-kafka %s (librdkafka %s)"
              % (confluent_kafka.version(), confluent_kafka.libversion()[0]), flush=True)
        produce, consume, admin, transactions = ck_produce, ck_consume, ck_admin, ck_transactions

    placed, counts, produce_err = {}, {}, {}
    for codec in CODECS:
        topic = "%s-%s" % (prefix, codec)
        began = time.time()
        try:
            produce(bootstrap, topic, count, codec, False, placed)
            counts[topic] = count
            print("# produced %d to %s in %.1fs" % (count, topic, time.time() - began), flush=True)
        except Exception as e:
            produce_err[codec] = repr(e)
            print("# produce %s: %s" % (topic, traceback.format_exc()), flush=True)
    idem_topic = prefix + "-idem"
    idem_count = max(count // 10, 1)
    try:
        produce(bootstrap, idem_topic, idem_count, "none", True, placed)
        counts[idem_topic] = idem_count
    except Exception as e:
        produce_err["idem"] = repr(e)

    v = Verifier(client, placed, counts)
    assigned, commit_err, consume_err = False, None, None
    began = time.time()
    if counts:
        try:
            assigned, commit_err = consume(bootstrap, prefix + "-group", v)
        except Exception as e:
            consume_err = repr(e)
            print("# consume: %s" % traceback.format_exc(), flush=True)
    print("# consumed in %.1fs" % (time.time() - began), flush=True)

    missing = {t: n - len(v.seen[t]) for t, n in counts.items() if len(v.seen[t]) < n}
    consume_errs = [m for f, m in v.errors if f == "consume"]
    if consume_err:
        consume_errs.insert(0, consume_err)
    if missing:
        consume_errs.append("missing records: %r" % missing)

    def topic_ok(topic):
        return topic in counts and len(v.seen[topic]) == counts[topic] and not any(
            m.startswith(topic + "[") for f, m in v.errors)

    if "none" in produce_err:
        result("produce", "FAIL", produce_err["none"])
    else:
        result("produce", "PASS", "%d records x %d codecs, keyed and unkeyed" % (count, len(CODECS)))
    if not counts:
        result("consume", "FAIL", "nothing was produced")
    elif consume_errs:
        result("consume", "FAIL", "; ".join(consume_errs[:3]))
    else:
        result("consume", "PASS", "key, value, headers, timestamp, offset of every record")
    result("group", "PASS" if assigned else "FAIL",
           "" if assigned else (consume_err or "no partitions assigned"))
    if commit_err:
        result("commit", "FAIL", commit_err)
    elif counts and not consume_err:
        result("commit", "PASS", "committed offsets equal the partitions' ends")
    else:
        result("commit", "FAIL", "not reached")
    hdr = [m for f, m in v.errors if f == "headers"]
    result("headers", "FAIL" if hdr or not counts else "PASS", "; ".join(hdr[:2]))
    for codec in CODECS:
        topic = "%s-%s" % (prefix, codec)
        if codec in produce_err:
            result("codec:" + codec, "FAIL", "produce: " + produce_err[codec])
        elif not topic_ok(topic):
            errs = [m for f, m in v.errors if m.startswith(topic + "[")]
            result("codec:" + codec, "FAIL", "; ".join(errs[:2]) or "records missing")
        else:
            result("codec:" + codec, "PASS", "")
    if "idem" in produce_err:
        result("idempotence", "FAIL", produce_err["idem"])
    elif not topic_ok(idem_topic):
        result("idempotence", "FAIL", "records missing or wrong")
    else:
        result("idempotence", "PASS", "%d records" % idem_count)
    err = admin(bootstrap, prefix + "-admin")
    result("admin", "FAIL" if err else "PASS",
           err or "create, describe, list, describe configs, delete")
    k = max(count // 10, 1)
    try:
        err = txn_check(transactions(bootstrap, prefix + "-txn", k), k)
    except Exception as e:
        err = repr(e)
        print("# transactions: %s" % traceback.format_exc(), flush=True)
    result("transactions", "FAIL" if err else "PASS",
           err or "commit, abort, commit of %d records each; read_committed read the committed ones" % k)


if __name__ == "__main__":
    main()
