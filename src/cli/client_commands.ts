// Client-side CLI commands (topics, produce, consume, groups). They talk to a broker over the Kafka
// protocol through the project's SDK (src/sdk/).
import readline from 'node:readline';
import { type ClientFlags, client, print, progress, with_admin } from './client_support.ts';
import type { Admin, LogCleanerProgress } from '../sdk/index.ts';

function parse_configs(pairs: string[] = []): Array<{ name: string; value: string }> {
  return pairs.map((pair) => {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`--config expects NAME=VALUE, got ${JSON.stringify(pair)}`);
    return { name: pair.slice(0, at), value: pair.slice(at + 1) };
  });
}

export async function topic_create(
  name: string,
  options: ClientFlags & { partitions: string; replicationFactor?: string; config?: string[] },
): Promise<void> {
  const replication = options.replicationFactor === undefined ? -1 : Number(options.replicationFactor);
  const created = await with_admin(options, (admin) =>
    admin.createTopics({
      waitForLeaders: true,
      topics: [
        {
          topic: name,
          numPartitions: Number(options.partitions),
          replicationFactor: replication,
          configEntries: parse_configs(options.config),
        },
      ],
    }),
  );
  if (!created) throw new Error(`topic ${name} already exists`);
  print(
    options,
    { topic: name, partitions: Number(options.partitions) },
    () => `created topic ${name} with ${options.partitions} partition(s)`,
  );
}

export async function topic_list(options: ClientFlags & { internal?: boolean }): Promise<void> {
  const topics = (await with_admin(options, (admin) => admin.listTopics()))
    .filter((name) => options.internal || !name.startsWith('__'))
    .sort();
  print(options, topics, () => topics.join('\n'));
}

/** Each partition's log cleaner progress on its leader, for a compacted topic. */
async function compaction_on_leaders(admin: Admin, topic: string): Promise<Map<number, LogCleanerProgress>> {
  const progress = new Map<number, LogCleanerProgress>();
  const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
  const leaders = new Map(metadata.topics[0]!.partitions.map((p) => [p.partitionId, p.leader]));
  for (const broker of await admin.describeLogDirs({ topics: [{ topic }] })) {
    for (const dir of broker.logDirs)
      for (const p of dir.topics.find((t) => t.topic === topic)?.partitions ?? [])
        if (p.compaction && leaders.get(p.partition) === broker.brokerId) progress.set(p.partition, p.compaction);
  }
  return progress;
}

function compaction_text(c: LogCleanerProgress | null): string {
  if (!c) return '';
  const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;
  return (
    `  dirty ${c.dirtyRatio.toFixed(2)} (compacted below ${c.firstDirtyOffset}; cleaner read ${mb(c.bytesRead)}, ` +
    `wrote ${mb(c.bytesWritten)})`
  );
}

export async function topic_describe(name: string, options: ClientFlags): Promise<void> {
  const described = await with_admin(options, async (admin) => {
    const metadata = await admin.fetchTopicMetadata({ topics: [name] });
    const offsets = await admin.fetchTopicOffsets(name);
    const configs = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name }] });
    const config = Object.fromEntries(configs.resources[0]!.configEntries.map((c) => [c.configName, c.configValue]));
    const compaction = config['cleanup.policy']?.includes('compact') ? await compaction_on_leaders(admin, name) : null;
    return {
      topic: name,
      partitions: metadata.topics[0]!.partitions.map((p) => {
        const o = offsets.find((x) => x.partition === p.partitionId)!;
        return {
          partition: p.partitionId,
          leader: p.leader,
          replicas: p.replicas,
          isr: p.isr,
          start_offset: Number(o.low),
          end_offset: Number(o.high),
          compaction: compaction?.get(p.partitionId) ?? null,
        };
      }),
      configs: config,
    };
  });
  print(options, described, () =>
    [
      `topic ${name}`,
      ...described.partitions.map(
        (p) =>
          `  partition ${p.partition}  leader ${p.leader}  replicas ${p.replicas.join(',')}  isr ${p.isr.join(',')} ` +
          ` offsets ${p.start_offset}..${p.end_offset}${compaction_text(p.compaction)}`,
      ),
      ...Object.entries(described.configs).map(([k, v]) => `  ${k}=${v}`),
    ].join('\n'),
  );
}

export async function topic_delete(name: string, options: ClientFlags): Promise<void> {
  await with_admin(options, (admin) => admin.deleteTopics({ topics: [name] }));
  print(options, { deleted: name }, () => `deleted topic ${name}`);
}

export async function topic_purge(name: string, options: ClientFlags): Promise<void> {
  const purged = await with_admin(options, async (admin) => {
    const offsets = await admin.fetchTopicOffsets(name);
    const partitions = offsets
      .filter((p) => Number(p.high) > Number(p.low))
      .map((p) => ({ partition: p.partition, offset: p.high }));
    if (partitions.length > 0) await admin.deleteTopicRecords({ topic: name, partitions });
    return { topic: name, messages: offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0) };
  });
  print(options, purged, () => `purged ${purged.messages} messages from ${name}`);
}

export async function topic_add_partitions(name: string, options: ClientFlags & { count: string }): Promise<void> {
  await with_admin(options, (admin) =>
    admin.createPartitions({ topicPartitions: [{ topic: name, count: Number(options.count) }] }),
  );
  print(
    options,
    { topic: name, partitions: Number(options.count) },
    () => `topic ${name} now has ${options.count} partitions`,
  );
}

/** --acks as the SDK producer takes it: -1 (all), 1 or 0 (none). */
function parse_acks(value: string): -1 | 1 | 0 {
  if (value === '-1' || value === 'all') return -1;
  if (value === '1') return 1;
  if (value === '0') return 0;
  throw new Error(`--acks expects -1 (all), 1 or 0, got ${JSON.stringify(value)}`);
}

/** Chunks of standard input sent at once; several may be in flight, each resolved in order. */
const CHUNK_MESSAGES = 1000;
const CHUNKS_IN_FLIGHT = 4;

/** Sends --value, or one message per line of standard input. */
export async function produce(
  topic: string,
  options: ClientFlags & { key?: string; value?: string; acks: string },
): Promise<void> {
  const acks = parse_acks(options.acks);
  const producer = client(options).producer({ idempotent: acks === -1, acks, allowAutoTopicCreation: true });
  await producer.connect();
  let sent = 0;
  try {
    if (options.value !== undefined) {
      await producer.send({ topic, acks, messages: [{ key: options.key, value: options.value }] });
      sent = 1;
    } else {
      // Progress only when lines come from a pipe or file: typed lines would be drawn over.
      const bar = progress(options, `produce ${topic}`, null, Boolean(process.stdin.isTTY));
      const in_flight: Array<Promise<number>> = [];
      const acknowledged = async (promise: Promise<number>) => {
        sent += await promise;
        bar.update(sent);
      };
      let batch: Array<{ key?: string; value: string }> = [];
      const send = () => {
        const messages = batch;
        batch = [];
        const promise = producer.send({ topic, acks, messages }).then(() => messages.length);
        promise.catch(() => {}); // awaited in order below; this only keeps a later failure from going unhandled
        in_flight.push(promise);
      };
      try {
        const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
        for await (const line of lines) {
          batch.push({ key: options.key, value: line });
          if (batch.length >= CHUNK_MESSAGES) {
            send();
            if (in_flight.length >= CHUNKS_IN_FLIGHT) await acknowledged(in_flight.shift()!);
          }
        }
        if (batch.length > 0) send();
        while (in_flight.length > 0) await acknowledged(in_flight.shift()!);
      } finally {
        bar.stop();
      }
    }
  } finally {
    await producer.disconnect();
  }
  print(options, { topic, messages: sent }, () => `sent ${sent} message(s) to ${topic}`);
}

/**
 * Prints messages (value per line, or JSON lines) until --max or --timeout-ms of silence. With
 * --group the consumer joins that group and commits what it printed; without it the consumer runs
 * in broadcast mode: it reads every partition itself, joins no group and commits nothing.
 */
export async function consume(
  topic: string,
  options: ClientFlags & { group?: string; fromBeginning?: boolean; max?: string; timeoutMs: string },
): Promise<void> {
  const group = options.group ?? null;
  const max = options.max === undefined ? Infinity : Number(options.max);
  if (Number.isNaN(max) || max < 0)
    throw new Error(`--max expects a number of messages, got ${JSON.stringify(options.max)}`);
  const timeout_ms = Number(options.timeoutMs);
  if (!Number.isFinite(timeout_ms) || timeout_ms < 0)
    throw new Error(`--timeout-ms expects milliseconds, got ${JSON.stringify(options.timeoutMs)}`);
  const consumer = client(options).consumer(group === null ? {} : { groupId: group });
  let received = 0;
  let finished = false;
  // Progress only when the messages go to a file or pipe: on the terminal they would be drawn over.
  const bar = progress(options, `consume ${topic}`, Number.isFinite(max) ? max : null, Boolean(process.stdout.isTTY));
  let on_signal = () => {};
  let on_stdout_error = (_error: NodeJS.ErrnoException) => {};
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: Boolean(options.fromBeginning) });
    await new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      // Stops handing messages over at once (nothing unprinted is committed), then returns.
      const finish = () => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        consumer.stop().catch(() => {});
        resolve();
      };
      // Ctrl-C or SIGTERM: stop as after --max (commit what was printed, leave the group, print the summary).
      on_signal = finish;
      process.once('SIGINT', on_signal);
      process.once('SIGTERM', on_signal);
      if (max === 0) return finish();
      timer = setTimeout(finish, timeout_ms);
      const fail = (error: unknown) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        reject(error);
      };
      // The reader went away (`sluice consume ... | head`): stop quietly, as after --max.
      on_stdout_error = (error) => (error.code === 'EPIPE' ? finish() : fail(error));
      process.stdout.on('error', on_stdout_error);
      // After run() has returned the consumer retries on its own; an error it gives up on ends the command.
      consumer.on<{ error: unknown; restart: boolean }>(consumer.events.CRASH, ({ payload }) => {
        if (!payload.restart) fail(payload.error);
      });
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            if (finished) return;
            received++;
            const value = message.value?.toString() ?? '';
            const key = message.key?.toString() ?? null;
            const json = () => JSON.stringify({ partition, offset: Number(message.offset), key, value });
            process.stdout.write(options.json ? `${json()}\n` : `${value}\n`);
            bar.update(received);
            clearTimeout(timer);
            if (received >= max) finish();
            else timer = setTimeout(finish, timeout_ms);
          },
        })
        .catch(fail);
    });
  } finally {
    bar.stop();
    process.removeListener('SIGINT', on_signal);
    process.removeListener('SIGTERM', on_signal);
    process.stdout.removeListener('error', on_stdout_error);
    await consumer.disconnect(); // commits what was printed (with --group) and leaves the group
  }
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
        lag.push({
          topic: topic.topic,
          partition: p.partition,
          committed,
          end,
          lag: committed < 0 ? null : end - committed,
        });
      }
    }
    const g = groups[0]!;
    return {
      group,
      state: g.state,
      protocol: g.protocol,
      members: g.members.map((m) => ({ member_id: m.memberId, client_id: m.clientId, host: m.clientHost })),
      offsets: lag,
    };
  });
  print(options, described, () =>
    [
      `group ${group}  state ${described.state}  protocol ${described.protocol}`,
      ...described.members.map((m) => `  member ${m.member_id}  client ${m.client_id}  ${m.host}`),
      ...described.offsets.map(
        (o) => `  ${o.topic}-${o.partition}  committed ${o.committed}  end ${o.end}  lag ${o.lag ?? '-'}`,
      ),
    ].join('\n'),
  );
}

export async function group_reset_offsets(
  group: string,
  options: ClientFlags & { topic: string; to: string },
): Promise<void> {
  const partitions = await with_admin(options, async (admin) => {
    const bounds = await admin.fetchTopicOffsets(options.topic);
    const target = (p: { low: string; high: string }) => {
      if (options.to === 'earliest') return p.low;
      if (options.to === 'latest') return p.high;
      const offset = Number(options.to);
      if (!Number.isInteger(offset) || offset < 0)
        throw new Error(`--to expects earliest, latest or an offset, got ${JSON.stringify(options.to)}`);
      return String(Math.min(Math.max(offset, Number(p.low)), Number(p.high)));
    };
    // Concrete offsets, so the group's committed positions say where it really is.
    const chosen = bounds.map((p) => ({ partition: p.partition, offset: target(p) }));
    await admin.setOffsets({ groupId: group, topic: options.topic, partitions: chosen });
    return chosen;
  });
  print(
    options,
    {
      group,
      topic: options.topic,
      partitions: partitions.map((p) => ({ partition: p.partition, offset: Number(p.offset) })),
    },
    () =>
      [
        `reset ${group} on ${options.topic}:`,
        ...partitions.map((p) => `  partition ${p.partition} -> ${p.offset}`),
      ].join('\n'),
  );
}
