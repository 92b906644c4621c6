"""Round-trips Customer records through samsa's Schema Registry with
confluent-kafka-python's SchemaRegistryClient, AvroSerializer and
AvroDeserializer (e2e/schemaregistry/python_test.go runs it).

Usage: schema_registry_avro.py BOOTSTRAP REGISTRY_URL TOPIC COUNT

Produces COUNT records {"customerName": "customer-<i>", "customerId": i}
with the schema registered automatically under TOPIC-value, consumes them
back from the start and prints one JSON line:
{"records": [...decoded values in order...]}.
"""
import json
import sys
import time

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

CUSTOMER = json.dumps({
    "type": "record",
    "name": "Customer",
    "fields": [
        {"name": "customerName", "type": "string"},
        {"name": "customerId", "type": "int"},
    ],
})


def main():
    bootstrap, registry_url, topic, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    registry = SchemaRegistryClient({"url": registry_url})
    serialize = AvroSerializer(registry, CUSTOMER)
    deserialize = AvroDeserializer(registry)
    ctx = SerializationContext(topic, MessageField.VALUE)

    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(count):
        value = serialize({"customerName": f"customer-{i}", "customerId": i}, ctx)
        producer.produce(topic, key=str(i), value=value)
    if producer.flush(30) != 0:
        sys.exit("records left unsent after 30s")

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "schema-registry-avro",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    records = []
    deadline = time.monotonic() + 60
    while len(records) < count and time.monotonic() < deadline:
        msg = consumer.poll(1.0)
        if msg is None:
            continue
        if msg.error():
            sys.exit(f"consume: {msg.error()}")
        records.append(deserialize(msg.value(), ctx))
    consumer.close()
    print(json.dumps({"records": records}))


if __name__ == "__main__":
    main()
