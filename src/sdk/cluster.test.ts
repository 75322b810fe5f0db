import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { Cluster, RETRY_DEFAULT } from './cluster.ts';
import { ConnectionError, KafkaProtocolError } from './errors.ts';
import { start_broker } from '../compose/start_broker.ts';
import { METADATA } from '../protocol/kafka/messages/03_metadata.ts';
import { temp_dir } from '../../test/support/storage.ts';

test('the cluster layer bootstraps, negotiates versions, reads metadata and routes to leaders', async () => {
  const data_dir = temp_dir('sdk-cluster');
  const broker = await start_broker({ data_dir, kafka: { host: '127.0.0.1', port: 0 }, auto_create_topics: false });
  const { host, port } = broker.kafka_address;
  const cluster = new Cluster({
    brokers: ['127.0.0.1:1', `${host}:${port}`],
    client_id: 'sdk-test',
    retry: { ...RETRY_DEFAULT, retries: 1 },
    request_timeout_ms: 5000,
    max_in_flight: 8,
  });
  try {
    await broker.broker.topics.create('events', 3);
    const topic = await cluster.topic('events');
    assert.equal(topic.partitions.length, 3);
    assert.equal(cluster.brokers.get(1)?.port, port);
    assert.equal(cluster.cluster_id, broker.broker.cluster_id);
    const leader = await cluster.node(topic.partitions[0]!.leader);
    assert.equal(leader.version(METADATA, 0, 99), 12, 'the highest version both sides speak');
    await assert.rejects(
      cluster.topic('missing'),
      (error: unknown) =>
        error instanceof KafkaProtocolError && error.type === 'UNKNOWN_TOPIC_OR_PARTITION' && error.retriable,
    );
  } finally {
    await cluster.close();
    await broker.close();
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
});

// A broker being killed closed the connection during ApiVersions; the v0 retry's plain error made
// a KIP-848 consumer whose coordinator died give up for good instead of retrying.
test('consumer_gave_up_on_a_dying_coordinator: a connection closed while opening is a ConnectionError', async () => {
  const server = net.createServer((socket) => socket.once('data', () => socket.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const cluster = new Cluster({
    brokers: [`127.0.0.1:${port}`],
    client_id: 'sdk-test',
    retry: { ...RETRY_DEFAULT, retries: 0 },
    request_timeout_ms: 5000,
    max_in_flight: 8,
  });
  try {
    // As after a metadata answer naming the broker: the connection is opened by node id.
    cluster.brokers.set(7, { node_id: 7, host: '127.0.0.1', port });
    await assert.rejects(cluster.node(7), (error: unknown) => error instanceof ConnectionError && error.retriable);
  } finally {
    await cluster.close();
    server.close();
  }
});
