# Debian's python3-confluent-kafka (librdkafka) as a transactional producer against the broker
# given: one transaction committed, one aborted, then what read_committed and read_uncommitted
# consumers read. Prints one JSON line with the values each saw.
import json
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer

bootstrap, topic = sys.argv[1], sys.argv[2]

producer = Producer({
    'bootstrap.servers': bootstrap,
    'transactional.id': 'librdkafka-txn',
    'transaction.timeout.ms': 60000,
})
producer.init_transactions(30)

producer.begin_transaction()
for i in range(5):
    producer.produce(topic, key=f'k{i}', value=f'committed-{i}', partition=i % 3)
producer.commit_transaction(30)

producer.begin_transaction()
for i in range(3):
    producer.produce(topic, key=f'k{i}', value=f'aborted-{i}', partition=i % 3)
producer.flush(30)
producer.abort_transaction(30)

producer.begin_transaction()
producer.produce(topic, key='k', value='committed-after-abort', partition=0)
producer.commit_transaction(30)


def read(isolation, expected):
    consumer = Consumer({
        'bootstrap.servers': bootstrap,
        'group.id': f'reader-{isolation}',
        'auto.offset.reset': 'earliest',
        'isolation.level': isolation,
        'enable.auto.commit': False,
    })
    consumer.subscribe([topic])
    values = []
    deadline = time.time() + 20
    while time.time() < deadline and len(values) < expected:
        message = consumer.poll(0.5)
        if message is None:
            continue
        if message.error():
            raise KafkaException(message.error())
        values.append(message.value().decode())
    # a little longer: what should not arrive has its chance to
    end = time.time() + 1
    while time.time() < end:
        message = consumer.poll(0.2)
        if message is not None and not message.error():
            values.append(message.value().decode())
    consumer.close()
    return sorted(values)


print(json.dumps({
    'read_committed': read('read_committed', 6),
    'read_uncommitted': read('read_uncommitted', 9),
}))
