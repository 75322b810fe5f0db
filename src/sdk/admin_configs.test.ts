// The admin client's configs against an in-process broker: describe, alter (the whole set),
// incremental alter (set and delete), broker resources and the errors for bad configs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigResourceTypes, ConfigSource } from './admin.ts';
import { TEST_TIMEOUT_MS, admin, rejects_with, start, stop } from './admin_test_support.ts';

describe('Admin', () => {
  before(start);
  after(stop);
  test(
    'configs: describe, alter (whole set), incremental alter (set and delete)',
    { timeout: TEST_TIMEOUT_MS },
    manages_configs,
  );
});

async function manages_configs(): Promise<void> {
  await admin.createTopics({
    topics: [{ topic: 'cfg', numPartitions: 1, configEntries: [{ name: 'retention.ms', value: '3600000' }] }],
  });
  await check_described();
  await check_altered();
  await check_broker_resources_and_errors();
}

/** The configs of topic 'cfg' by name (`names`, or all of them), the resource's answer checked. */
async function entries(names?: string[]) {
  const { resources } = await admin.describeConfigs({
    resources: [{ type: ConfigResourceTypes.TOPIC, name: 'cfg', ...(names ? { configNames: names } : {}) }],
  });
  assert.equal(resources.length, 1);
  assert.equal(resources[0]!.errorCode, 0);
  assert.equal(resources[0]!.resourceName, 'cfg');
  assert.equal(resources[0]!.resourceType, ConfigResourceTypes.TOPIC);
  return new Map(resources[0]!.configEntries.map((e) => [e.configName, e]));
}

async function check_described(): Promise<void> {
  const configs = await entries(['retention.ms', 'max.message.bytes']);
  assert.deepEqual([...configs.keys()].sort(), ['max.message.bytes', 'retention.ms']);
  assert.deepEqual(configs.get('retention.ms'), {
    configName: 'retention.ms',
    configValue: '3600000',
    isDefault: false,
    configSource: ConfigSource.TOPIC_CONFIG,
    isSensitive: false,
    readOnly: false,
    configSynonyms: [],
  });
  assert.equal(configs.get('max.message.bytes')!.isDefault, true);
  assert.equal(configs.get('max.message.bytes')!.configSource, ConfigSource.DEFAULT_CONFIG);
  assert.ok((await entries()).size >= 36, 'every topic config without configNames');
  // With synonyms: the value set, then the default.
  const { resources } = await admin.describeConfigs({
    resources: [{ type: ConfigResourceTypes.TOPIC, name: 'cfg', configNames: ['retention.ms'] }],
    includeSynonyms: true,
  });
  assert.deepEqual(
    resources[0]!.configEntries[0]!.configSynonyms.map((s) => [s.configValue, s.configSource]),
    [
      ['3600000', ConfigSource.TOPIC_CONFIG],
      ['604800000', ConfigSource.DEFAULT_CONFIG],
    ],
  );
}

async function check_altered(): Promise<void> {
  // AlterConfigs replaces the whole set: retention.ms goes back to its default.
  assert.deepEqual(
    await admin.alterConfigs({
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: 'cfg',
          configEntries: [{ name: 'max.message.bytes', value: '2000000' }],
        },
      ],
    }),
    {
      resources: [{ errorCode: 0, errorMessage: null, resourceName: 'cfg', resourceType: ConfigResourceTypes.TOPIC }],
      throttleTime: 0,
    },
  );
  let configs = await entries();
  assert.equal(configs.get('max.message.bytes')!.configValue, '2000000');
  assert.equal(configs.get('retention.ms')!.isDefault, true);

  // validateOnly changes nothing.
  await admin.alterConfigs({
    resources: [
      { type: ConfigResourceTypes.TOPIC, name: 'cfg', configEntries: [{ name: 'retention.ms', value: '1000' }] },
    ],
    validateOnly: true,
  });
  assert.equal((await entries()).get('retention.ms')!.isDefault, true);

  // IncrementalAlterConfigs changes single keys.
  const incremental = await admin.incrementalAlterConfigs({
    resources: [
      {
        type: ConfigResourceTypes.TOPIC,
        name: 'cfg',
        configEntries: [
          { name: 'retention.ms', value: '60000', operation: 'SET' },
          { name: 'max.message.bytes', operation: 'DELETE' },
        ],
      },
    ],
  });
  assert.deepEqual(incremental.resources, [
    { errorCode: 0, errorMessage: null, resourceName: 'cfg', resourceType: ConfigResourceTypes.TOPIC },
  ]);
  configs = await entries();
  assert.equal(configs.get('retention.ms')!.configValue, '60000');
  assert.equal(configs.get('max.message.bytes')!.isDefault, true);
  await appends_and_subtracts();
}

/** APPEND and SUBTRACT change a list config item by item; on another config they are refused. */
async function appends_and_subtracts(): Promise<void> {
  const change = (operation: 'APPEND' | 'SUBTRACT', name: string, value: string) =>
    admin.incrementalAlterConfigs({
      resources: [{ type: ConfigResourceTypes.TOPIC, name: 'cfg', configEntries: [{ name, value, operation }] }],
    });
  const throttled = 'follower.replication.throttled.replicas';
  await change('APPEND', throttled, '0:1');
  await change('APPEND', throttled, '0:1,0:2');
  assert.equal((await entries([throttled])).get(throttled)!.configValue, '0:1,0:2');
  await change('SUBTRACT', throttled, '0:1');
  assert.equal((await entries([throttled])).get(throttled)!.configValue, '0:2');
  await rejects_with(change('APPEND', 'retention.ms', '5'), 'INVALID_CONFIG');
  await change('APPEND', 'cleanup.policy', 'compact');
  assert.equal((await entries(['cleanup.policy'])).get('cleanup.policy')!.configValue, 'delete,compact');
  await change('SUBTRACT', 'cleanup.policy', 'compact');
  assert.equal((await entries(['cleanup.policy'])).get('cleanup.policy')!.configValue, 'delete');
  await rejects_with(change('APPEND', 'cleanup.policy', 'shred'), 'INVALID_CONFIG');
}

async function check_broker_resources_and_errors(): Promise<void> {
  // Broker resources go to that broker: its settings, Kafka-named where Kafka has them.
  const brokers = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.BROKER, name: '1' }] });
  assert.deepEqual(
    brokers.resources.map((r) => [r.errorCode, r.resourceName]),
    [[0, '1']],
  );
  const node_id = brokers.resources[0]!.configEntries.find((entry) => entry.configName === 'node.id');
  assert.deepEqual([node_id?.configValue, node_id?.readOnly], ['1', true]);

  const bad = await rejects_with(
    admin.alterConfigs({
      resources: [
        { type: ConfigResourceTypes.TOPIC, name: 'cfg', configEntries: [{ name: 'bogus.setting', value: '1' }] },
      ],
    }),
    'INVALID_CONFIG',
  );
  assert.match(bad.message, /topic "cfg"/);
  await rejects_with(
    admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'cfg-missing' }] }),
    'UNKNOWN_TOPIC_OR_PARTITION',
  );
  await rejects_with(
    admin.incrementalAlterConfigs({
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: 'cfg',
          configEntries: [{ name: 'retention.ms', value: 'soon', operation: 'SET' }],
        },
      ],
    }),
    'INVALID_CONFIG',
  );
}
