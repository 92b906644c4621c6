"""The interop matrix's sasl_ssl step for kafka-python and confluent-kafka.

    check.py <client>:sasl_ssl ADDR TOPIC COUNT CA_PEM MECHANISM USER PASSWORD

Over the SASL_SSL listener at ADDR (TLS trusting CA_PEM, then SCRAM as
USER), produce COUNT records b"sasl-<i>" to TOPIC and consume them back in
the group TOPIC-g, committing. Prints one "RESULT sasl_ssl ..." line.
"""

import time

TIMEOUT_S = 60


def _want(n):
    return sorted("sasl-%d" % i for i in range(n))


def kafka_python(addr, topic, n, ca, mech, user, password):
    from kafka import KafkaConsumer, KafkaProducer
    auth = dict(bootstrap_servers=addr, security_protocol="SASL_SSL", ssl_cafile=ca,
                sasl_mechanism=mech, sasl_plain_username=user, sasl_plain_password=password)
    p = KafkaProducer(acks="all", **auth)
    try:
        for f in [p.send(topic, value=b"sasl-%d" % i) for i in range(n)]:
            f.get(timeout=30)
    finally:
        p.close(timeout=10)
    c = KafkaConsumer(group_id=topic + "-g", enable_auto_commit=False, auto_offset_reset="earliest", **auth)
    got = []
    try:
        c.subscribe([topic])
        deadline = time.time() + TIMEOUT_S
        while len(got) < n and time.time() < deadline:
            for recs in c.poll(timeout_ms=500).values():
                got.extend(r.value.decode() for r in recs)
        c.commit()
    finally:
        c.close()
    return got


def confluent_kafka(addr, topic, n, ca, mech, user, password):
    from confluent_kafka import Consumer, Producer
    auth = {"bootstrap.servers": addr, "security.protocol": "SASL_SSL", "ssl.ca.location": ca,
            "sasl.mechanisms": mech, "sasl.username": user, "sasl.password": password}
    p = Producer(dict(auth, acks="all"))
    errs = []
    for i in range(n):
        p.produce(topic, value=b"sasl-%d" % i, on_delivery=lambda err, _m: err and errs.append(str(err)))
    left = p.flush(60)
    if left or errs:
        raise RuntimeError("%d records undelivered: %s" % (left, "; ".join(errs[:3])))
    c = Consumer(dict(auth, **{"group.id": topic + "-g", "enable.auto.commit": False,
                               "auto.offset.reset": "earliest"}))
    got = []
    try:
        c.subscribe([topic])
        deadline = time.time() + TIMEOUT_S
        while len(got) < n and time.time() < deadline:
            for m in c.consume(num_messages=1000, timeout=0.5):
                if m.error():
                    raise RuntimeError("consume: %s" % m.error())
                got.append(m.value().decode())
        c.commit(asynchronous=False)
    finally:
        c.close()
    return got


def run(client, args, result):
    addr, topic, n, ca, mech, user, password = args[0], args[1], int(args[2]), args[3], args[4], args[5], args[6]
    step = kafka_python if client == "kafka-python" else confluent_kafka
    try:
        got = sorted(step(addr, topic, n, ca, mech, user, password))
    except Exception as e:  # the client's own error
        result("sasl_ssl", "FAIL", repr(e))
        return
    if got != _want(n):
        result("sasl_ssl", "FAIL", "read %d records, want the %d sent" % (len(got), n))
        return
    result("sasl_ssl", "PASS", "%s over TLS trusting the run's CA, %d records produced and consumed "
           "in a group (committed)" % (mech, n))
