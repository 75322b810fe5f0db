// Client-side CLI commands (topics, produce, consume, groups). They talk to a broker over the Kafka
// protocol; until the project's own SDK lands they use kafkajs.
import readline from 'node:readline';
import { Kafka, logLevel, type Admin } from 'kafkajs';

export interface ClientFlags {
  bootstrap: string;
  json?: boolean;
}

function client(flags: ClientFlags): Kafka {
  return new Kafka({ brokers: flags.bootstrap.split(','), clientId: 'sluice-cli', logLevel: logLevel.NOTHING, retry: { retries: 3 } });
}

async function with_admin<T>(flags: ClientFlags, work: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = client(flags).admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect();
  }
}

function print(flags: ClientFlags, value: unknown, text: () => string): void {
  process.stdout.write(flags.json ? `${JSON.stringify(value)}\n` : `${text()}\n`);
}

function parse_configs(pairs: string[] = []): Array<{ name: string; value: string }> {
  return pairs.map((pair) => {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`--config expects NAME=VALUE, got ${JSON.stringify(pair)}`);
    return { name: pair.slice(0, at), value: pair.slice(at + 1) };
  });
}

export async function topic_create(name: string, options: ClientFlags & { partitions: string; config?: string[] }): Promise<void> {
  const created = await with_admin(options, (admin) =>
    admin.createTopics({ waitForLeaders: true, topics: [{ topic: name, numPartitions: Number(options.partitions), configEntries: parse_configs(options.config) }] }),
  );
  if (!created) throw new Error(`topic ${name} already exists`);
  print(options, { topic: name, partitions: Number(options.partitions) }, () => `created topic ${name} with ${options.partitions} partition(s)`);
}

export async function topic_list(options: ClientFlags & { internal?: boolean }): Promise<void> {
  const topics = (await with_admin(options, (admin) => admin.listTopics())).filter((name) => options.internal || !name.startsWith('__')).sort();
  print(options, topics, () => topics.join('\n'));
}

export async function topic_describe(name: string, options: ClientFlags): Promise<void> {
  const described = await with_admin(options, async (admin) => {
    const metadata = await admin.fetchTopicMetadata({ topics: [name] });
    const offsets = await admin.fetchTopicOffsets(name);
    const configs = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name }] });
    return {
      topic: name,
      partitions: metadata.topics[0]!.partitions.map((p) => {
        const o = offsets.find((x) => x.partition === p.partitionId)!;
        return { partition: p.partitionId, leader: p.leader, start_offset: Number(o.low), end_offset: Number(o.high) };
      }),
      configs: Object.fromEntries(configs.resources[0]!.configEntries.map((c) => [c.configName, c.configValue])),
    };
  });
  print(options, described, () =>
    [
      `topic ${name}`,
      ...described.partitions.map((p) => `  partition ${p.partition}  leader ${p.leader}  offsets ${p.start_offset}..${p.end_offset}`),
      ...Object.entries(described.configs).map(([k, v]) => `  ${k}=${v}`),
    ].join('\n'),
  );
}

export async function topic_delete(name: string, options: ClientFlags): Promise<void> {
  await with_admin(options, (admin) => admin.deleteTopics({ topics: [name] }));
  print(options, { deleted: name }, () => `deleted topic ${name}`);
}

export async function topic_add_partitions(name: string, options: ClientFlags & { count: string }): Promise<void> {
  await with_admin(options, (admin) => admin.createPartitions({ topicPartitions: [{ topic: name, count: Number(options.count) }] }));
  print(options, { topic: name, partitions: Number(options.count) }, () => `topic ${name} now has ${options.count} partitions`);
}

/** Sends --value, or one message per line of standard input. */
export async function produce(topic: string, options: ClientFlags & { key?: string; value?: string; acks: string }): Promise<void> {
  const producer = client(options).producer({ idempotent: options.acks === '-1' || options.acks === 'all', allowAutoTopicCreation: true });
  await producer.connect();
  const acks = options.acks === 'all' ? -1 : Number(options.acks);
  let sent = 0;
  const batch: Array<{ key?: string; value: string }> = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await producer.send({ topic, acks, messages: batch.splice(0) });
  };
  try {
    if (options.value !== undefined) {
      batch.push({ key: options.key, value: options.value });
      sent = 1;
    } else {
      const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
      for await (const line of lines) {
        batch.push({ key: options.key, value: line });
        sent++;
        if (batch.length >= 1000) await flush();
      }
    }
    await flush();
  } finally {
    await producer.disconnect();
  }
  print(options, { topic, messages: sent }, () => `sent ${sent} message(s) to ${topic}`);
}

/** Prints messages (value per line, or JSON lines) until --max or --timeout-ms of silence. */
export async function consume(topic: string, options: ClientFlags & { group?: string; fromBeginning?: boolean; max?: string; timeoutMs: string }): Promise<void> {
  const group = options.group ?? `sluice-cli-${process.pid}-${Date.now()}`;
  const consumer = client(options).consumer({ groupId: group });
  const max = options.max === undefined ? Infinity : Number(options.max);
  let received = 0;
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: Boolean(options.fromBeginning) });
  await new Promise<void>((resolve) => {
    let timer = setTimeout(resolve, Number(options.timeoutMs));
    void consumer.run({
      eachMessage: async ({ partition, message }) => {
        if (received >= max) return;
        received++;
        const value = message.value?.toString() ?? '';
        process.stdout.write(
          options.json ? `${JSON.stringify({ partition, offset: Number(message.offset), key: message.key?.toString() ?? null, value })}\n` : `${value}\n`,
        );
        clearTimeout(timer);
        if (received >= max) resolve();
        else timer = setTimeout(resolve, Number(options.timeoutMs));
      },
    });
  });
  await consumer.disconnect();
  if (options.json) process.stderr.write(`${JSON.stringify({ topic, group, messages: received })}\n`);
}

export async function group_list(options: ClientFlags): Promise<void> {
  const { groups } = await with_admin(options, (admin) => admin.listGroups());
  print(options, groups, () => groups.map((g) => `${g.groupId}  ${g.protocolType}`).join('\n'));
}

export async function group_describe(group: string, options: ClientFlags): Promise<void> {
  const described = await with_admin(options, async (admin) => {
    const { groups } = await admin.describeGroups([group]);
    const offsets = await admin.fetchOffsets({ groupId: group });
    const lag = [];
    for (const topic of offsets) {
      const ends = await admin.fetchTopicOffsets(topic.topic);
      for (const p of topic.partitions) {
        const end = Number(ends.find((e) => e.partition === p.partition)?.high ?? -1);
        const committed = Number(p.offset);
        lag.push({ topic: topic.topic, partition: p.partition, committed, end, lag: committed < 0 ? null : end - committed });
      }
    }
    const g = groups[0]!;
    return { group, state: g.state, protocol: g.protocol, members: g.members.map((m) => ({ member_id: m.memberId, client_id: m.clientId, host: m.clientHost })), offsets: lag };
  });
  print(options, described, () =>
    [
      `group ${group}  state ${described.state}  protocol ${described.protocol}`,
      ...described.members.map((m) => `  member ${m.member_id}  client ${m.client_id}  ${m.host}`),
      ...described.offsets.map((o) => `  ${o.topic}-${o.partition}  committed ${o.committed}  end ${o.end}  lag ${o.lag ?? '-'}`),
    ].join('\n'),
  );
}

export async function group_reset_offsets(group: string, options: ClientFlags & { topic: string; to: string }): Promise<void> {
  const partitions = await with_admin(options, async (admin) => {
    const bounds = await admin.fetchTopicOffsets(options.topic);
    const target = (p: { low: string; high: string }) => {
      if (options.to === 'earliest') return p.low;
      if (options.to === 'latest') return p.high;
      const offset = Number(options.to);
      if (!Number.isInteger(offset) || offset < 0) throw new Error(`--to expects earliest, latest or an offset, got ${JSON.stringify(options.to)}`);
      return String(Math.min(Math.max(offset, Number(p.low)), Number(p.high)));
    };
    // Concrete offsets, so the group's committed positions say where it really is.
    const chosen = bounds.map((p) => ({ partition: p.partition, offset: target(p) }));
    await admin.setOffsets({ groupId: group, topic: options.topic, partitions: chosen });
    return chosen;
  });
  print(options, { group, topic: options.topic, partitions: partitions.map((p) => ({ partition: p.partition, offset: Number(p.offset) })) }, () =>
    [`reset ${group} on ${options.topic}:`, ...partitions.map((p) => `  partition ${p.partition} -> ${p.offset}`)].join('\n'),
  );
}
