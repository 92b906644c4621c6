#!/usr/bin/env python3
"""One confluent-kafka (librdkafka) consumer group member for the group tests.

Usage:
    group_member.py BOOTSTRAP TOPIC GROUP PROTOCOL(consumer|classic)

It runs until its standard input closes (then it closes the consumer,
leaving the group) or it is killed. After every poll it commits the
polled offsets synchronously and only then prints the values, one line
"R <value>" each: a value printed is a value committed, so a member
killed at any moment leaves no printed record for another member to read
again. The same contract as interop/java's GroupMember.
"""

import sys
import threading

from confluent_kafka import Consumer, KafkaException


def main():
    bootstrap, topic, group, protocol = sys.argv[1:5]
    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "group.protocol": protocol,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    }
    if protocol == "classic":
        conf["session.timeout.ms"] = 6000
    consumer = Consumer(conf)
    consumer.subscribe([topic])
    open_stdin = threading.Event()
    open_stdin.set()

    def watch_stdin():
        while sys.stdin.buffer.read(1):
            pass
        open_stdin.clear()

    threading.Thread(target=watch_stdin, daemon=True).start()
    while open_stdin.is_set():
        msgs = consumer.consume(num_messages=500, timeout=0.2)
        good = []
        for m in msgs:
            if m.error() is not None:
                if m.error().fatal():
                    raise KafkaException(m.error())
                continue
            good.append(m)
        if not good:
            continue
        consumer.commit(asynchronous=False)
        sys.stdout.write("".join("R %s\n" % m.value().decode() for m in good))
        sys.stdout.flush()
    consumer.close()
    print("LEFT", flush=True)


if __name__ == "__main__":
    main()
