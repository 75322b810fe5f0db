# A second AMQP client for the interop test: Debian's python3-pika, with publisher confirms and
# manual acknowledgements. Prints one JSON line with what it saw.
import json
import sys

import pika

host, port, queue, count = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
params = pika.ConnectionParameters(host=host, port=port, credentials=pika.PlainCredentials('guest', 'guest'))
connection = pika.BlockingConnection(params)
channel = connection.channel()
channel.queue_declare(queue=queue, durable=True)
channel.confirm_delivery()
confirmed = 0
for i in range(count):
    # With confirms on, basic_publish returns once the broker acked it and raises on a nack.
    channel.basic_publish(
        exchange='',
        routing_key=queue,
        body=f'pika {i}'.encode(),
        properties=pika.BasicProperties(delivery_mode=2, message_id=str(i), headers={'n': i}),
    )
    confirmed += 1

channel.basic_qos(prefetch_count=10)
seen = []
rejected_once = []
for method, properties, body in channel.consume(queue, inactivity_timeout=5):
    if method is None:
        break
    if body == b'pika 0' and not rejected_once:
        rejected_once.append(method.delivery_tag)
        channel.basic_reject(method.delivery_tag, requeue=True)
        continue
    seen.append({'body': body.decode(), 'redelivered': method.redelivered, 'n': properties.headers.get('n')})
    channel.basic_ack(method.delivery_tag)
    if len(seen) == count:
        break
channel.cancel()
connection.close()
print(json.dumps({'confirmed': confirmed, 'seen': seen}))
