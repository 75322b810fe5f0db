// Finding 38, "transaction inputs stored twice": the fault suite's input producers replaced a failed
// kafkajs producer with a new one whose connect() could fail at InitProducerId under the faults.
// kafkajs 2.2.4 then sends anyway, without a producer id: no longer idempotent, its retries stored
// inputs twice, and the transactions loop rightly copied both copies. Here a proxy drops the
// connection of a producer's first InitProducerId: a producer left so writes batches without a producer id,
// and one connected through `connect_idempotent` writes them with one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { free_port } from '../support/etcd.ts';
import { request_frames, start_tcp_proxy, type TcpProxy } from '../support/tcp_proxy.ts';
import { connect_idempotent } from '../../faults/workload.ts';
import { batch_producer_id } from '../../src/format/batch_layout.ts';
import { INIT_PRODUCER_ID } from '../../src/protocol/kafka/messages/22_init_producer_id.ts';

let proxy: TcpProxy;
let broker: BrokerProcess;
/** How many InitProducerId requests the proxy is still to cut off. */
let cut_init_producer_id = 0;

before(async () => {
  const broker_port = await free_port();
  proxy = await start_tcp_proxy(
    broker_port,
    request_frames((api_key) => {
      if (api_key !== INIT_PRODUCER_ID.api_key || cut_init_producer_id === 0) return;
      cut_init_producer_id--;
      proxy.cut();
      proxy.heal();
    }),
  );
  broker = await start_broker_process({ port: broker_port, args: ['--advertise', `127.0.0.1:${proxy.port}`] });
});

after(async () => {
  await broker.stop();
  await proxy.close();
});

function client(): Kafka {
  return new Kafka({
    clientId: 'reconnect',
    brokers: [`127.0.0.1:${proxy.port}`],
    logLevel: logLevel.NOTHING,
    retry: { retries: 1, initialRetryTime: 50 },
  });
}

/** The producer ids of the batches stored in the topic's partition 0. */
function stored_producer_ids(topic: string): number[] {
  const segment = fs.readFileSync(path.join(broker.data_dir, `${topic}-0`, '00000000000000000000.log'));
  const ids: number[] = [];
  for (let position = 0; position + 61 <= segment.length; position += 12 + segment.readInt32BE(position + 8))
    ids.push(batch_producer_id(segment, position));
  return ids;
}

async function write_one(kafka: Kafka, topic: string, connect: (p: ReturnType<Kafka['producer']>) => Promise<unknown>) {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
  await admin.disconnect();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  // kafkajs does not retry an InitProducerId whose connection closed: one cut fails connect().
  cut_init_producer_id = 1;
  await connect(producer);
  assert.equal(cut_init_producer_id, 0, 'the InitProducerId was cut');
  await producer.send({ topic, acks: -1, messages: [{ value: 'input' }] });
  await producer.disconnect();
}

test('a kafkajs producer whose connect failed at InitProducerId stores batches without a producer id', async () => {
  await write_one(client(), 'reconnect-hazard', (producer) => assert.rejects(producer.connect()));
  assert.deepEqual(stored_producer_ids('reconnect-hazard'), [-1]);
});

test('connect_idempotent connects again until the producer has its id: inputs stored twice (finding 38)', async () => {
  await write_one(client(), 'reconnect-fixed', async (producer) => {
    assert.equal(await connect_idempotent(producer, () => true), true);
  });
  const ids = stored_producer_ids('reconnect-fixed');
  assert.equal(ids.length, 1);
  assert.ok(ids[0]! >= 0, `stored with producer id ${ids[0]}`);
});
