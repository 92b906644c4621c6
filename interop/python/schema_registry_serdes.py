"""Round-trips Customer records through samsa's Schema Registry with
confluent-kafka-python's SchemaRegistryClient and its serializers
(e2e/schemaregistry/python_test.go runs it).

Usage: schema_registry_serdes.py FORMAT BOOTSTRAP REGISTRY_URL TOPIC COUNT

FORMAT is avro, json or protobuf: AvroSerializer/AvroDeserializer,
JSONSerializer/JSONDeserializer, ProtobufSerializer/ProtobufDeserializer.
Produces COUNT Customer records {"customerName": "customer-<i>",
"customerId": i}, the schema registered automatically under TOPIC-value,
consumes them back from the start and prints one JSON line:
{"records": [...decoded values in order...]}.
"""
import json
import sys
import time

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.serialization import MessageField, SerializationContext

AVRO_CUSTOMER = json.dumps({
    "type": "record",
    "name": "Customer",
    "fields": [
        {"name": "customerName", "type": "string"},
        {"name": "customerId", "type": "int"},
    ],
})

JSON_CUSTOMER = json.dumps({
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Customer",
    "type": "object",
    "properties": {
        "customerName": {"type": "string"},
        "customerId": {"type": "integer"},
    },
    "required": ["customerName", "customerId"],
})


def protobuf_customer_class():
    """A generated-code-free Customer message class: its descriptor built
    here, as protoc would have."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    fdp = descriptor_pb2.FileDescriptorProto(name="shop/customer.proto", package="shop", syntax="proto3")
    msg = fdp.message_type.add(name="Customer")
    f = descriptor_pb2.FieldDescriptorProto
    msg.field.add(name="customerName", json_name="customerName", number=1, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    msg.field.add(name="customerId", json_name="customerId", number=2, type=f.TYPE_INT32, label=f.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Customer"))


def serdes(fmt, registry):
    """The serializer, the deserializer and how to make/read a record."""
    if fmt == "avro":
        from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
        return AvroSerializer(registry, AVRO_CUSTOMER), AvroDeserializer(registry), (lambda d: d), (lambda v: v)
    if fmt == "json":
        from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
        return (JSONSerializer(JSON_CUSTOMER, registry), JSONDeserializer(None, schema_registry_client=registry),
                (lambda d: d), (lambda v: v))
    if fmt == "protobuf":
        from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
        customer = protobuf_customer_class()
        return (ProtobufSerializer(customer, registry, {"use.deprecated.format": False}),
                ProtobufDeserializer(customer, {"use.deprecated.format": False}),
                (lambda d: customer(**d)),
                (lambda m: {"customerName": m.customerName, "customerId": m.customerId}))
    sys.exit(f"unknown format {fmt}")


def main():
    fmt, bootstrap, registry_url, topic, count = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    registry = SchemaRegistryClient({"url": registry_url})
    serialize, deserialize, make, read = serdes(fmt, registry)
    ctx = SerializationContext(topic, MessageField.VALUE)

    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(count):
        value = serialize(make({"customerName": f"customer-{i}", "customerId": i}), ctx)
        producer.produce(topic, key=str(i), value=value)
    if producer.flush(30) != 0:
        sys.exit("records left unsent after 30s")

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"schema-registry-{fmt}",
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
        records.append(read(deserialize(msg.value(), ctx)))
    consumer.close()
    print(json.dumps({"records": records}))


if __name__ == "__main__":
    main()
