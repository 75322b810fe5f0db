// `sluice dlq list|peek|redrive`: the dead-letter topics share groups write (`<topic>.<group>.dlq`).
// Redrive copies selected dead letters back to their origin topic (or another), keeping key, value,
// timestamp and the original headers; each redrive is recorded in the audit topic
// `sluice.dlq.audit`, and a dead letter already recorded there is not sent again.
import type { KafkaMessage } from '../sdk/records.ts';
import type { Sluice } from '../sdk/index.ts';
import { type ClientFlags, type Letter, client, print, progress, read_all, with_admin } from './client_support.ts';

export const AUDIT_TOPIC = 'sluice.dlq.audit';
const DLQ_SUFFIX = '.dlq';
const DLQ_HEADER_PREFIX = 'sluice-dlq-';
/** Header naming the dead letter a redriven message came from. */
const REDRIVEN_FROM = 'sluice-redriven-from';
/** Messages read between two checks that every partition reached its end. */
const PEEK_DEFAULT = 20;
const SEND_CHUNK = 500;

const header = (message: KafkaMessage, name: string): string | null => {
  const value = message.headers?.[name];
  if (value === undefined) return null;
  return String(Array.isArray(value) ? value[value.length - 1] : value);
};

export async function dlq_list(options: ClientFlags): Promise<void> {
  const rows = await with_admin(options, async (admin) => {
    const out = [];
    for (const topic of (await admin.listTopics()).filter((t) => t.endsWith(DLQ_SUFFIX)).sort()) {
      const offsets = await admin.fetchTopicOffsets(topic);
      const messages = offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
      const [origin, group] = split_name(topic);
      out.push({ topic, origin, group, messages });
    }
    return out;
  });
  print(options, rows, () => (rows.length === 0 ? 'no dead-letter topics' : rows.map((r) => `${r.topic}  ${r.messages} messages  (origin ${r.origin}, group ${r.group})`).join('\n')));
}

/** `<origin>.<group>.dlq` into origin and group (a topic name may itself hold dots: the group is the last part). */
function split_name(topic: string): [string, string] {
  const base = topic.slice(0, -DLQ_SUFFIX.length);
  const at = base.lastIndexOf('.');
  return at < 0 ? [base, ''] : [base.slice(0, at), base.slice(at + 1)];
}

function describe_letter(topic: string, letter: Letter) {
  const m = letter.message;
  return {
    dlq: topic,
    partition: letter.partition,
    offset: letter.offset,
    key: m.key?.toString() ?? null,
    value: m.value?.toString() ?? null,
    timestamp: Number(m.timestamp),
    origin: { topic: header(m, 'sluice-dlq-topic'), partition: Number(header(m, 'sluice-dlq-partition')), offset: Number(header(m, 'sluice-dlq-offset')) },
    group: header(m, 'sluice-dlq-group'),
    delivery_count: Number(header(m, 'sluice-dlq-delivery-count')),
    reason: header(m, 'sluice-dlq-reason'),
    dead_lettered_at: Number(header(m, 'sluice-dlq-time-ms')),
  };
}

export async function dlq_peek(topic: string, options: ClientFlags & { max?: string }): Promise<void> {
  const max = options.max === undefined ? PEEK_DEFAULT : Number(options.max);
  if (!Number.isInteger(max) || max < 0) throw new Error(`--max expects a number of messages, got ${JSON.stringify(options.max)}`);
  const letters = (await read_all(client(options), topic, max)).map((l) => describe_letter(topic, l));
  if (options.json) {
    for (const letter of letters) process.stdout.write(`${JSON.stringify(letter)}\n`);
    return;
  }
  if (letters.length === 0) process.stdout.write(`${topic} is empty\n`);
  for (const l of letters) {
    process.stdout.write(`${l.partition}:${l.offset}  from ${l.origin.topic}-${l.origin.partition}@${l.origin.offset}  deliveries ${l.delivery_count}  ${l.reason ?? ''}\n  ${l.value ?? '(null)'}\n`);
  }
}

/** "0:5,0:7" or "5,7" (partition 0) into partition:offset keys. */
function parse_selection(text: string): Set<string> {
  const keys = new Set<string>();
  for (const part of text.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const [a, b] = part.includes(':') ? part.split(':') : ['0', part];
    const partition = Number(a);
    const offset = Number(b);
    if (!Number.isInteger(partition) || partition < 0 || !Number.isInteger(offset) || offset < 0) throw new Error(`--offsets expects OFFSET or PARTITION:OFFSET items, got ${JSON.stringify(part)}`);
    keys.add(`${partition}:${offset}`);
  }
  return keys;
}

export async function dlq_redrive(topic: string, options: ClientFlags & { to?: string; offsets?: string; all?: boolean }): Promise<void> {
  if (!topic.endsWith(DLQ_SUFFIX)) throw new Error(`${topic} is not a dead-letter topic (its name ends with ${DLQ_SUFFIX})`);
  if (!options.all && options.offsets === undefined) throw new Error('choose what to redrive: --all, or --offsets 3,7 (or PARTITION:OFFSET items)');
  const selection = options.offsets === undefined ? null : parse_selection(options.offsets);
  const sluice = client(options);
  if (options.to !== undefined) {
    const known = await with_admin(options, (admin) => admin.listTopics());
    if (!known.includes(options.to)) throw new Error(`--to: topic ${options.to} does not exist`);
  }
  const letters = (await read_all(sluice, topic)).filter((l) => selection === null || selection.has(`${l.partition}:${l.offset}`));
  if (selection !== null && letters.length < selection.size) {
    const found = new Set(letters.map((l) => `${l.partition}:${l.offset}`));
    throw new Error(`not in ${topic}: ${[...selection].filter((k) => !found.has(k)).join(', ')}`);
  }
  const done = await redriven_before(sluice, topic);
  const todo = letters.filter((l) => !done.has(`${l.partition}:${l.offset}`));
  const bar = progress(options, `redrive ${topic}`, todo.length, false);
  const producer = sluice.producer({ allowAutoTopicCreation: true });
  await producer.connect();
  let sent = 0;
  try {
    for (let i = 0; i < todo.length; i += SEND_CHUNK) {
      const chunk = todo.slice(i, i + SEND_CHUNK);
      const targets = chunk.map((l) => options.to ?? header(l.message, 'sluice-dlq-topic'));
      const missing = chunk.findIndex((_, j) => !targets[j]);
      if (missing >= 0) throw new Error(`${topic} ${chunk[missing]!.partition}:${chunk[missing]!.offset} has no sluice-dlq-topic header; give --to`);
      const results = await Promise.all(chunk.map((l, j) => producer.send({ topic: targets[j]!, messages: [redriven(topic, l)] })));
      await producer.send({
        topic: AUDIT_TOPIC,
        messages: chunk.map((l, j) => ({
          key: `${topic}/${l.partition}/${l.offset}`,
          value: JSON.stringify({ dlq: topic, partition: l.partition, offset: l.offset, to: targets[j], to_partition: results[j]![0]!.partition, to_offset: Number(results[j]![0]!.baseOffset), time_ms: Date.now() }),
        })),
      });
      sent += chunk.length;
      bar.update(sent);
    }
  } finally {
    bar.stop();
    await producer.disconnect();
  }
  const summary = { dlq: topic, selected: letters.length, redriven: sent, skipped_already_redriven: letters.length - todo.length, audit: AUDIT_TOPIC };
  print(options, summary, () => `redrove ${sent} of ${letters.length} selected dead letters from ${topic}${summary.skipped_already_redriven > 0 ? ` (${summary.skipped_already_redriven} were redriven before)` : ''}; recorded in ${AUDIT_TOPIC}`);
}

/** The original message again: dead-letter headers dropped, where it came from added. */
function redriven(topic: string, letter: Letter) {
  const headers: Record<string, string | Buffer | Array<string | Buffer>> = {};
  for (const [name, value] of Object.entries(letter.message.headers ?? {})) {
    if (!name.startsWith(DLQ_HEADER_PREFIX) && name !== REDRIVEN_FROM && value !== undefined) headers[name] = value as Buffer;
  }
  headers[REDRIVEN_FROM] = `${topic}/${letter.partition}/${letter.offset}`;
  return { key: letter.message.key, value: letter.message.value, timestamp: letter.message.timestamp, headers };
}

/** Dead letters of `topic` already redriven, by "partition:offset", from the audit topic. */
async function redriven_before(sluice: Sluice, topic: string): Promise<Set<string>> {
  const admin = sluice.admin();
  await admin.connect();
  const exists = await admin
    .listTopics()
    .then((topics) => topics.includes(AUDIT_TOPIC))
    .finally(() => admin.disconnect());
  const done = new Set<string>();
  if (!exists) return done;
  for (const entry of await read_all(sluice, AUDIT_TOPIC)) {
    const record = JSON.parse(entry.message.value?.toString() ?? '{}') as { dlq?: string; partition?: number; offset?: number };
    if (record.dlq === topic) done.add(`${record.partition}:${record.offset}`);
  }
  return done;
}
