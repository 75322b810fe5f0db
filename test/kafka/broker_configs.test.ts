// Broker configs against a broker process: kafkajs describes the settings the broker started with
// (Kafka-named, read-only), sets a cluster-wide topic default that takes effect on existing topics
// (message.max.bytes refuses a larger record) and is described on the topic with its source; a
// broker's dynamic connection limit applies to the next connection; read-only configs, topic
// defaults for one broker, unknown brokers and BROKER_LOGGER resources are refused by name; the
// dynamic configs outlive a restart; `sluice config` sets, describes and deletes them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Kafka, logLevel, type Admin as KafkaAdmin } from 'kafkajs';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { SLUICE_CLI } from '../support/cli.ts';
import { Sluice, AdminError } from '../../src/sdk/index.ts';
import { ErrorCode } from '../../src/protocol/kafka/error_codes.ts';
import { Connection } from '../../src/protocol/kafka/client_connection.ts';
import { INCREMENTAL_ALTER_CONFIGS } from '../../src/protocol/kafka/messages/44_incremental_alter_configs.ts';

const BROKER = 4;
const TOPIC = 2;
const SOURCE = { DYNAMIC_BROKER: 2, DYNAMIC_DEFAULT: 3, STATIC: 4, DEFAULT: 5 };
const ARGS = ['--connections-per-ip-max', '50', '--transaction-max-timeout-ms', '60000'];

let broker: BrokerProcess;
let data_dir: string;

before(async () => {
  data_dir = new_data_dir('broker-configs');
  broker = await start_broker_process({ data_dir, args: ARGS });
});

after(async () => {
  await broker?.stop();
  if (data_dir) fs.rmSync(data_dir, { recursive: true, force: true });
});

async function with_kafkajs<T>(work: (admin: KafkaAdmin) => Promise<T>): Promise<T> {
  const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'broker-configs', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect();
  }
}

/** kafkajs for a broker; the SDK for the cluster-wide defaults (kafkajs refuses their empty name). */
async function describe_broker(name: string, keys?: string[]) {
  const resources = [{ type: BROKER, name, ...(keys ? { configNames: keys } : {}) }];
  if (name !== '') {
    const answer = await with_kafkajs((admin) => admin.describeConfigs({ resources, includeSynonyms: true }));
    return new Map(answer.resources[0]!.configEntries.map((entry) => [entry.configName, entry]));
  }
  const admin = new Sluice({ brokers: [broker.bootstrap] }).admin();
  await admin.connect();
  try {
    const answer = await admin.describeConfigs({ resources, includeSynonyms: true });
    return new Map(answer.resources[0]!.configEntries.map((entry) => [entry.configName, entry]));
  } finally {
    await admin.disconnect();
  }
}

/** The SDK's answer to one alteration (kafkajs hides the broker's message behind the code's). */
async function sdk_alter(
  type: number,
  name: string,
  entries: Array<{ name: string; value?: string; operation: 'SET' | 'DELETE' }>,
) {
  const admin = new Sluice({ brokers: [broker.bootstrap] }).admin();
  await admin.connect();
  try {
    const answer = await admin.incrementalAlterConfigs({ resources: [{ type, name, configEntries: entries }] });
    return { errorCode: answer.resources[0]!.errorCode, errorMessage: answer.resources[0]!.errorMessage };
  } catch (error) {
    if (!(error instanceof AdminError)) throw error;
    const failure = error.failures[0]!;
    return { errorCode: failure.code, errorMessage: failure.message };
  } finally {
    await admin.disconnect();
  }
}

function sluice(command: string[]) {
  return promisify(execFile)(process.execPath, [...SLUICE_CLI, 'config', ...command, '--bootstrap', broker.bootstrap], {
    timeout: 30_000,
  });
}

test('a broker describes the settings it started with, Kafka-named where Kafka has them, read-only', async () => {
  const configs = await describe_broker('1');
  assert.equal(configs.get('node.id')?.configValue, '1');
  const timeout = configs.get('transaction.max.timeout.ms')!;
  assert.deepEqual([timeout.configValue, timeout.configSource, timeout.readOnly], ['60000', SOURCE.STATIC, true]);
  const per_ip = configs.get('max.connections.per.ip')!;
  assert.deepEqual([per_ip.configValue, per_ip.configSource, per_ip.readOnly], ['50', SOURCE.STATIC, false]);
  assert.equal(configs.get('sluice.durability')?.configSource, SOURCE.DEFAULT);
  const retention = configs.get('log.retention.ms')!;
  assert.deepEqual([retention.configValue, retention.configSource], ['604800000', SOURCE.DEFAULT]);
  assert.equal((await describe_broker('1', ['num.partitions'])).size, 1);
});

test('a cluster-wide topic default applies to topics without their own value, and is described as theirs', async () => {
  const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'defaults', logLevel: logLevel.NOTHING });
  await with_kafkajs(async (admin) => {
    await admin.createTopics({
      topics: [
        { topic: 'plain', numPartitions: 1 },
        { topic: 'own', numPartitions: 1, configEntries: [{ name: 'max.message.bytes', value: '100000' }] },
      ],
    });
  });
  // kafkajs refuses the empty name of the cluster-wide defaults: the SDK sets them.
  const set = await sdk_alter(BROKER, '', [{ name: 'message.max.bytes', value: '2000', operation: 'SET' }]);
  assert.equal(set.errorCode, 0);
  const producer = kafka.producer({ retry: { retries: 0 } });
  await producer.connect();
  try {
    const big = { value: Buffer.alloc(5000, 0x61) };
    await assert.rejects(producer.send({ topic: 'plain', messages: [big] }), /too large|larger/i);
    await producer.send({ topic: 'own', messages: [big] });
  } finally {
    await producer.disconnect();
  }
  const described = await with_kafkajs((admin) =>
    admin.describeConfigs({
      resources: [{ type: TOPIC, name: 'plain', configNames: ['max.message.bytes'] }],
      includeSynonyms: true,
    }),
  );
  const entry = described.resources[0]!.configEntries[0]!;
  assert.deepEqual([entry.configValue, entry.configSource], ['2000', SOURCE.DYNAMIC_DEFAULT]);
  assert.deepEqual(
    entry.configSynonyms.map((s) => [s.configName, s.configSource]),
    [
      ['message.max.bytes', SOURCE.DYNAMIC_DEFAULT],
      ['max.message.bytes', SOURCE.DEFAULT],
    ],
  );
  assert.equal((await describe_broker('')).get('message.max.bytes')?.configValue, '2000');
  assert.equal((await describe_broker('1')).get('message.max.bytes')?.configSource, SOURCE.DYNAMIC_DEFAULT);
  const removed = await sdk_alter(BROKER, '', [{ name: 'message.max.bytes', operation: 'DELETE' }]);
  assert.equal(removed.errorCode, 0);
  const again = kafka.producer();
  await again.connect();
  await again.send({ topic: 'plain', messages: [{ value: Buffer.alloc(5000, 0x62) }] });
  await again.disconnect();
});

test("a broker's dynamic connection limit applies to its next connections", async () => {
  const set = await sdk_alter(BROKER, '1', [{ name: 'max.connections.per.ip', value: '2', operation: 'SET' }]);
  assert.equal(set.errorCode, 0);
  assert.equal((await describe_broker('1')).get('max.connections.per.ip')?.configSource, SOURCE.DYNAMIC_BROKER);
  const [host, port] = broker.bootstrap.split(':');
  const sockets = await Promise.all(
    [0, 1, 2].map(
      () =>
        new Promise<net.Socket>((resolve, reject) => {
          const socket = net.connect(Number(port), host!, () => resolve(socket));
          socket.once('error', reject);
        }),
    ),
  );
  try {
    const closed = await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<boolean>((resolve) => {
            socket.once('close', () => resolve(true));
            setTimeout(() => resolve(false), 1_000);
          }),
      ),
    );
    assert.deepEqual(
      closed.filter((c) => c),
      [true],
    );
  } finally {
    for (const socket of sockets) socket.destroy();
  }
  const back = await sdk_alter(BROKER, '1', [{ name: 'max.connections.per.ip', operation: 'DELETE' }]);
  assert.equal(back.errorCode, 0);
  assert.equal((await describe_broker('1')).get('max.connections.per.ip')?.configValue, '50');
});

test('read-only configs, per-broker topic defaults, unknown brokers, BROKER_LOGGER: refused by name', async () => {
  const static_one = await sdk_alter(BROKER, '1', [{ name: 'num.partitions', value: '3', operation: 'SET' }]);
  assert.equal(static_one.errorCode, ErrorCode.INVALID_CONFIG);
  assert.match(static_one.errorMessage!, /num.partitions is read-only .*--partitions/);
  const per_broker = await sdk_alter(BROKER, '1', [{ name: 'log.retention.ms', value: '1000', operation: 'SET' }]);
  assert.equal(per_broker.errorCode, ErrorCode.INVALID_CONFIG);
  assert.match(per_broker.errorMessage!, /cluster-wide default/);
  const bad_value = await sdk_alter(BROKER, '', [{ name: 'log.retention.ms', value: 'soon', operation: 'SET' }]);
  assert.equal(bad_value.errorCode, ErrorCode.INVALID_CONFIG);
  const unknown = await sdk_alter(BROKER, '', [{ name: 'log.retention.weeks', value: '1', operation: 'SET' }]);
  assert.match(unknown.errorMessage!, /unknown broker config log.retention.weeks/);
  const [host, port] = broker.bootstrap.split(':');
  const connection = await Connection.connect(host!, Number(port));
  try {
    const response = await connection.call(INCREMENTAL_ALTER_CONFIGS, 1, {
      resources: [
        {
          resource_type: BROKER,
          resource_name: '7',
          configs: [{ name: 'max.connections.per.ip', config_operation: 0, value: '1' }],
        },
      ],
      validate_only: false,
    });
    assert.equal(response.responses[0]!.error_code, ErrorCode.INVALID_REQUEST);
    assert.match(response.responses[0]!.error_message!, /no broker "7"/);
  } finally {
    connection.close();
  }
  const logger = await sdk_alter(8, '1', [{ name: 'root', value: 'DEBUG', operation: 'SET' }]);
  assert.equal(logger.errorCode, ErrorCode.INVALID_REQUEST);
  assert.match(logger.errorMessage!, /BROKER_LOGGER resources are not served/);
});

test('`sluice config` sets, describes and deletes; dynamic configs outlive a restart', async () => {
  await sluice(['set', '--broker-default', 'log.retention.ms=3600000']);
  await sluice(['set', '--broker', '1', 'sluice.log_level=debug']);
  const { stdout } = await sluice(['describe', '--broker', '1']);
  assert.match(stdout, /log\.retention\.ms=3600000 {2}\(cluster default \(dynamic\)\)/);
  assert.match(stdout, /sluice\.log_level=debug {2}\(broker \(dynamic\)\)/);
  assert.doesNotMatch(stdout, /log\.segment\.bytes/); // at its default
  await broker.stop();
  broker = await start_broker_process({ data_dir, args: ARGS });
  await with_kafkajs((admin) => admin.createTopics({ topics: [{ topic: 'after-restart', numPartitions: 1 }] }));
  const topic = await sluice(['describe', '--topic', 'after-restart', '--json']);
  const entries = JSON.parse(topic.stdout) as Array<{ configName: string; configValue: string }>;
  assert.equal(entries.find((e) => e.configName === 'retention.ms')?.configValue, '3600000');
  await sluice(['delete', '--broker-default', 'log.retention.ms']);
  await sluice(['delete', '--broker', '1', 'sluice.log_level']);
  assert.match((await sluice(['describe', '--broker-default'])).stdout, /every config at its default/);
  await assert.rejects(sluice(['set', '--broker', '1', 'num.partitions=2']), /read-only/);
});
