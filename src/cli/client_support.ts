// What every client command shares: the SDK client from the common flags (bootstrap, SASL), an
// admin session, a progress bar on standard error for people, and output as text or JSON lines.
import cliProgress from 'cli-progress';
import { Sluice, type Admin, type SaslOptions } from '../sdk/index.ts';
import type { KafkaMessage } from '../sdk/records.ts';

export interface ClientFlags {
  bootstrap: string;
  json?: boolean;
  saslUsername?: string;
  saslMechanism?: string;
}

/** The SASL login from --sasl-username/--sasl-mechanism and SLUICE_SASL_PASSWORD (never a flag: argv is visible to every user). */
function sasl_of(flags: ClientFlags): SaslOptions | undefined {
  if (!flags.saslUsername) return undefined;
  const password = process.env.SLUICE_SASL_PASSWORD;
  if (!password) throw new Error('--sasl-username needs the password in the SLUICE_SASL_PASSWORD environment variable');
  return { mechanism: (flags.saslMechanism ?? 'scram-sha-256') as SaslOptions['mechanism'], username: flags.saslUsername, password };
}

export function client(flags: ClientFlags): Sluice {
  return new Sluice({ brokers: flags.bootstrap.split(','), clientId: 'sluice-cli', retry: { retries: 3 }, sasl: sasl_of(flags) });
}

export async function with_admin<T>(flags: ClientFlags, work: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = client(flags).admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect();
  }
}

/** A live counter on standard error, drawn only for people (a terminal, no --json); else a no-op. */
export interface Progress {
  update(count: number): void;
  stop(): void;
}

export function progress(flags: ClientFlags, label: string, total: number | null, interactive_stream_busy: boolean): Progress {
  if (!process.stderr.isTTY || flags.json || interactive_stream_busy) return { update: () => {}, stop: () => {} };
  const started = Date.now();
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: total === null ? `${label} {value} messages | {rate} msg/s | {duration_formatted}` : `${label} [{bar}] {value}/{total} messages | {rate} msg/s | {duration_formatted}`,
      hideCursor: false,
      clearOnComplete: true,
      fps: 10,
    },
    cliProgress.Presets.shades_classic,
  );
  const rate = (count: number) => ({ rate: Math.round(count / Math.max(0.001, (Date.now() - started) / 1000)) });
  bar.start(total ?? 0, 0, rate(0));
  return {
    update: (count) => bar.update(count, rate(count)),
    stop: () => bar.stop(),
  };
}

export function print(flags: ClientFlags, value: unknown, text: () => string): void {
  process.stdout.write(flags.json ? `${JSON.stringify(value)}\n` : `${text()}\n`);
}


/** A message with the partition and offset it was read from. */
export interface Letter {
  partition: number;
  offset: number;
  message: KafkaMessage;
}

/** Every message of `topic` from its start to its end as of now (a broadcast read, no group). */
export async function read_all(sluice: Sluice, topic: string, limit = Infinity, on_read?: (count: number) => void): Promise<Letter[]> {
  const admin = sluice.admin();
  await admin.connect();
  const bounds = await admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
  const remaining = new Map(bounds.filter((b) => Number(b.high) > Number(b.low)).map((b) => [b.partition, Number(b.high)]));
  const letters: Letter[] = [];
  if (remaining.size === 0 || limit <= 0) return letters;
  const consumer = sluice.consumer({ maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    consumer.on<{ error: unknown; restart: boolean }>(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart) reject(payload.error);
    });
    consumer
      .run({
        eachMessage: async ({ partition, message }) => {
          const end = remaining.get(partition);
          const offset = Number(message.offset);
          if (end === undefined || offset >= end || letters.length >= limit) return;
          letters.push({ partition, offset, message });
          on_read?.(letters.length);
          if (offset + 1 >= end) remaining.delete(partition);
          if (remaining.size === 0 || letters.length >= limit) resolve();
        },
      })
      .catch(reject);
  }).finally(() => consumer.disconnect());
  return letters.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
}

