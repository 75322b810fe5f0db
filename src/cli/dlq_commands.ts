// `sluice dlq list|peek|redrive`: the dead-letter topics share groups write (`<topic>.<group>.dlq`),
// through the SDK admin client (src/sdk/dead_letters.ts holds the logic); this file only parses
// options and prints.
import type { DeadLetter } from '../sdk/dead_letters.ts';
import { DLQ_AUDIT_TOPIC } from '../sdk/dead_letters.ts';
import { type ClientFlags, print, progress, with_admin } from './client_support.ts';

const PEEK_DEFAULT = 20;

export async function dlq_list(options: ClientFlags): Promise<void> {
  const rows = await with_admin(options, (admin) => admin.listDeadLetterTopics());
  print(options, rows, () =>
    rows.length === 0
      ? 'no dead-letter topics'
      : rows.map((r) => `${r.topic}  ${r.messages} messages  (origin ${r.origin}, group ${r.group})`).join('\n'),
  );
}

function as_json(topic: string, l: DeadLetter) {
  return {
    dlq: topic,
    partition: l.partition,
    offset: l.offset,
    key: l.key?.toString() ?? null,
    value: l.value?.toString() ?? null,
    timestamp: Number(l.timestamp),
    origin: l.origin,
    group: l.group,
    delivery_count: l.deliveryCount,
    reason: l.reason,
    dead_lettered_at: l.deadLetteredAt,
  };
}

export async function dlq_peek(topic: string, options: ClientFlags & { max?: string }): Promise<void> {
  const max = options.max === undefined ? PEEK_DEFAULT : Number(options.max);
  if (!Number.isInteger(max) || max < 0)
    throw new Error(`--max expects a number of messages, got ${JSON.stringify(options.max)}`);
  const letters = (await with_admin(options, (admin) => admin.peekDeadLetters(topic, { max }))).map((l) =>
    as_json(topic, l),
  );
  if (options.json) {
    for (const letter of letters) process.stdout.write(`${JSON.stringify(letter)}\n`);
    return;
  }
  if (letters.length === 0) process.stdout.write(`${topic} is empty\n`);
  for (const l of letters) {
    process.stdout.write(
      `${l.partition}:${l.offset}  from ${l.origin.topic}-${l.origin.partition}@${l.origin.offset}  deliveries ` +
        `${l.delivery_count}  ${l.reason ?? ''}\n  ${l.value ?? '(null)'}\n`,
    );
  }
}

/** "0:5,0:7" or "5,7" (partition 0) into partition and offset pairs. */
function parse_selection(text: string): Array<{ partition: number; offset: number }> {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      const [a, b] = part.includes(':') ? part.split(':') : ['0', part];
      const partition = Number(a);
      const offset = Number(b);
      if (!Number.isInteger(partition) || partition < 0 || !Number.isInteger(offset) || offset < 0)
        throw new Error(`--offsets expects OFFSET or PARTITION:OFFSET items, got ${JSON.stringify(part)}`);
      return { partition, offset };
    });
}

export async function dlq_redrive(
  topic: string,
  options: ClientFlags & { to?: string; offsets?: string; all?: boolean },
): Promise<void> {
  if (!options.all && options.offsets === undefined)
    throw new Error('choose what to redrive: --all, or --offsets 3,7 (or PARTITION:OFFSET items)');
  const offsets = options.offsets === undefined ? undefined : parse_selection(options.offsets);
  let bar: ReturnType<typeof progress> | null = null;
  const result = await with_admin(options, (admin) =>
    admin.redriveDeadLetters({
      topic,
      to: options.to,
      offsets,
      onProgress: (sent, total) => {
        bar ??= progress(options, `redrive ${topic}`, total, false);
        bar.update(sent);
      },
    }),
  ).finally(() => bar?.stop());
  const summary = {
    dlq: topic,
    selected: result.selected,
    redriven: result.redriven,
    skipped_already_redriven: result.skippedAlreadyRedriven,
    audit: DLQ_AUDIT_TOPIC,
  };
  print(options, summary, () => {
    const skipped = result.skippedAlreadyRedriven;
    const before = skipped > 0 ? ` (${skipped} were redriven before)` : '';
    const redrove = `redrove ${result.redriven} of ${result.selected} selected dead letters from ${topic}`;
    return `${redrove}${before}; recorded in ${DLQ_AUDIT_TOPIC}`;
  });
}
