// The admin client: create a topic with configs, describe it (partitions, leaders, offsets,
// configs), change a config and the partition count, look at a consumer group and its lag, reset
// the group's offsets (to the earliest offset, then to chosen ones), and delete the group and the
// topic. The same operations back the `sluice topic` and `sluice group` commands.
// Start a broker first (`npx sluice start`), then: node --import tsx examples/admin_topics_and_groups.ts
// (SLUICE_BOOTSTRAP=HOST:PORT points it at another broker.)
import { Sluice } from '../src/sdk/index.ts';

/** The resource type of a topic in describeConfigs / alterConfigs (kafkajs's ConfigResourceTypes.TOPIC). */
const TOPIC_RESOURCE = 2;

const sluice = new Sluice({ brokers: [process.env.SLUICE_BOOTSTRAP ?? '127.0.0.1:9092'], clientId: 'example-admin' });
const run = Date.now();
const topic = `example-admin-${run}`;
const groupId = `example-admin-group-${run}`;

const admin = sluice.admin();
await admin.connect();
const cluster = await admin.describeCluster();
console.log(`cluster ${cluster.clusterId}: brokers ${cluster.brokers.map((b) => `${b.nodeId}@${b.host}:${b.port}`).join(', ')}, controller ${cluster.controller}`);

// Create: true when created, false when it already existed.
const created = await admin.createTopics({ topics: [{ topic, numPartitions: 2, configEntries: [{ name: 'retention.ms', value: String(7 * 24 * 3_600_000) }] }] });
console.log(`created ${topic}: ${created}`);

// Describe: partitions and leaders, then configs.
const describe_topic = async () => {
  const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
  const { resources } = await admin.describeConfigs({ resources: [{ type: TOPIC_RESOURCE, name: topic, configNames: ['retention.ms', 'cleanup.policy'] }] });
  const configs = resources[0]!.configEntries.map((c) => `${c.configName}=${c.configValue}${c.isDefault ? ' (default)' : ''}`);
  console.log(`${topic}: ${topics[0]!.partitions.length} partitions (leaders ${topics[0]!.partitions.map((p) => p.leader).join(',')}); ${configs.join(', ')}`);
};
await describe_topic();

// Change one config key (the others stay) and grow the topic to 3 partitions.
await admin.incrementalAlterConfigs({ resources: [{ type: TOPIC_RESOURCE, name: topic, configEntries: [{ name: 'retention.ms', value: '3600000', operation: 'SET' }] }] });
await admin.createPartitions({ topicPartitions: [{ topic, count: 3 }] });
await describe_topic();

// Some messages, and a group that reads them all and commits.
const producer = sluice.producer();
await producer.connect();
await producer.send({ topic, messages: Array.from({ length: 30 }, (_, i) => ({ partition: i % 3, value: `message ${i}` })) });
await producer.disconnect();
const consumer = sluice.consumer({ groupId });
await consumer.connect();
await consumer.subscribe({ topics: [topic], fromBeginning: true });
let read = 0;
await consumer.run({ eachMessage: async () => void read++ });
while (read < 30) await new Promise((resolve) => setTimeout(resolve, 20));
const [live] = (await admin.describeGroups([groupId])).groups;
console.log(`group ${groupId}: state ${live!.state}, ${live!.members.length} member(s), assignor ${live!.protocol}`);
await consumer.disconnect(); // commits and leaves: offsets can only be changed while a group has no members

// Lag per partition: committed offset against the end of the partition.
const lag = async () => {
  const ends = await admin.fetchTopicOffsets(topic);
  const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
  return committed!.partitions.map((p) => ({ partition: p.partition, committed: Number(p.offset), lag: Number(ends.find((e) => e.partition === p.partition)!.high) - Number(p.offset) }));
};
const total_lag = async () => (await lag()).reduce((n, p) => n + p.lag, 0);
console.log('after consuming:', JSON.stringify(await lag()));
if ((await total_lag()) !== 0) throw new Error('the group should have consumed everything');

// Reset: every partition to its earliest offset (the group reads everything again next time) ...
await admin.resetOffsets({ groupId, topic, earliest: true });
console.log('after resetOffsets to earliest:', JSON.stringify(await lag()));
if ((await total_lag()) !== 30) throw new Error('after the reset the whole topic should be lag again');
// ... or to chosen offsets per partition (-1 for the end, -2 for the start).
await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '5' }, { partition: 1, offset: -1 }, { partition: 2, offset: -2 }] });
console.log('after setOffsets:', JSON.stringify(await lag()));

const { groups } = await admin.listGroups();
console.log(`groups: ${groups.filter((g) => g.groupId === groupId).map((g) => `${g.groupId} (${g.protocolType})`).join(', ')}`);

// Delete the group (its committed offsets go with it) and the topic.
await admin.deleteGroups([groupId]);
await admin.deleteTopics({ topics: [topic] });
const left = await admin.listTopics();
if (left.includes(topic)) throw new Error(`${topic} should be gone`);
console.log(`deleted group ${groupId} and topic ${topic}`);
await admin.disconnect();
