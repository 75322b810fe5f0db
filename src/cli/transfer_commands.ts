// `sluice export` and `sluice import`: a topic's messages to a JSON-lines file and back. The first
// line describes the export; each next line is one message with its partition, offset, key, value
// and headers (base64) and timestamp. Import keeps keys, headers and timestamps, puts each message
// in the partition it came from when the topic has it, and marks it with the header
// `sluice-import-id` (<source topic>/<partition>/<offset>): messages the target already holds with
// that id are skipped, so importing the same file twice adds nothing.
import fs from 'node:fs';
import readline from 'node:readline';
import { type ClientFlags, client, print, progress, with_admin } from './client_support.ts';

const FORMAT = 'sluice-export';
const FORMAT_VERSION = 1;
export const IMPORT_ID_HEADER = 'sluice-import-id';
const SEND_CHUNK = 500;

interface ExportHeader {
  format: string;
  version: number;
  topic: string;
  exported_at_ms: number;
  messages: number;
}

interface ExportedMessage {
  partition: number;
  offset: number;
  key: string | null;
  value: string | null;
  headers: Array<[string, string]>;
  timestamp: number;
}

const b64 = (buffer: Buffer | null | undefined) =>
  buffer === null || buffer === undefined ? null : buffer.toString('base64');

export async function export_topic(topic: string, options: ClientFlags & { out: string }): Promise<void> {
  const letters = await with_admin(options, async (admin) => {
    const total = (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
    const bar = progress(options, `export ${topic}`, total, false);
    return admin.readTopic(topic, { onRead: (count) => bar.update(count) }).finally(() => bar.stop());
  });
  const out = fs.createWriteStream(options.out, { flags: 'wx' }); // never overwrite an earlier export
  const write = (line: string) =>
    out.write(line) ? Promise.resolve() : new Promise<void>((resolve) => out.once('drain', resolve));
  const opened = new Promise<void>((resolve, reject) => out.once('open', () => resolve()).once('error', reject));
  await opened;
  const header: ExportHeader = {
    format: FORMAT,
    version: FORMAT_VERSION,
    topic,
    exported_at_ms: Date.now(),
    messages: letters.length,
  };
  await write(`${JSON.stringify(header)}\n`);
  for (const { partition, offset, message } of letters) {
    const headers: Array<[string, string]> = [];
    for (const [name, value] of Object.entries(message.headers ?? {})) {
      for (const one of Array.isArray(value) ? value : [value])
        if (one !== undefined) headers.push([name, b64(Buffer.from(one as Buffer))!]);
    }
    const line: ExportedMessage = {
      partition,
      offset,
      key: b64(message.key),
      value: b64(message.value),
      headers,
      timestamp: Number(message.timestamp),
    };
    await write(`${JSON.stringify(line)}\n`);
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  print(
    options,
    { topic, file: options.out, messages: letters.length },
    () => `exported ${letters.length} messages of ${topic} to ${options.out}`,
  );
}

async function read_export(file: string): Promise<{ header: ExportHeader; messages: ExportedMessage[] }> {
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  let header: ExportHeader | null = null;
  const messages: ExportedMessage[] = [];
  let number = 0;
  for await (const line of lines) {
    number++;
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new Error(`${file}:${number}: not JSON`);
    }
    if (!header) {
      const h = parsed as ExportHeader;
      if (h.format !== FORMAT || h.version !== FORMAT_VERSION)
        throw new Error(`${file}: not a ${FORMAT} v${FORMAT_VERSION} file`);
      header = h;
      continue;
    }
    const m = parsed as ExportedMessage;
    if (
      !Number.isInteger(m.partition) ||
      !Number.isInteger(m.offset) ||
      !Number.isSafeInteger(m.timestamp) ||
      !Array.isArray(m.headers)
    )
      throw new Error(`${file}:${number}: not an exported message`);
    messages.push(m);
  }
  if (!header) throw new Error(`${file} is empty`);
  if (messages.length !== header.messages)
    throw new Error(`${file}: ${messages.length} messages, the header says ${header.messages} (a cut-off file?)`);
  return { header, messages };
}

export async function import_topic(topic: string, options: ClientFlags & { in: string }): Promise<void> {
  const { header, messages } = await read_export(options.in);
  const sluice = client(options);
  const { partitions, existing } = await with_admin(options, async (admin) => {
    if (!(await admin.listTopics()).includes(topic))
      throw new Error(`topic ${topic} does not exist; create it first (sluice topic create)`);
    return { partitions: (await admin.fetchTopicOffsets(topic)).length, existing: await admin.readTopic(topic) };
  });
  const present = new Set<string>();
  for (const { message } of existing) {
    const id = message.headers?.[IMPORT_ID_HEADER];
    if (id !== undefined) present.add(String(Array.isArray(id) ? id[0] : id));
  }
  const id_of = (m: ExportedMessage) => `${header.topic}/${m.partition}/${m.offset}`;
  const todo = messages.filter((m) => !present.has(id_of(m)));
  const bar = progress(options, `import ${topic}`, todo.length, false);
  const producer = sluice.producer();
  await producer.connect();
  try {
    for (let i = 0; i < todo.length; i += SEND_CHUNK) {
      const chunk = todo.slice(i, i + SEND_CHUNK).map((m) => {
        const headers: Record<string, Buffer | Buffer[]> = {};
        for (const [name, value] of m.headers) {
          if (name === IMPORT_ID_HEADER) continue;
          const buffer = Buffer.from(value, 'base64');
          const existing = headers[name];
          headers[name] =
            existing === undefined ? buffer : Array.isArray(existing) ? [...existing, buffer] : [existing, buffer];
        }
        headers[IMPORT_ID_HEADER] = Buffer.from(id_of(m));
        return {
          key: m.key === null ? null : Buffer.from(m.key, 'base64'),
          value: m.value === null ? null : Buffer.from(m.value, 'base64'),
          headers,
          timestamp: m.timestamp,
          ...(m.partition < partitions ? { partition: m.partition } : {}),
        };
      });
      await producer.send({ topic, messages: chunk });
      bar.update(Math.min(todo.length, i + SEND_CHUNK));
    }
  } finally {
    bar.stop();
    await producer.disconnect();
  }
  const summary = {
    topic,
    file: options.in,
    messages: messages.length,
    imported: todo.length,
    skipped_already_present: messages.length - todo.length,
  };
  print(
    options,
    summary,
    () =>
      `imported ${todo.length} of ${messages.length} messages into ${topic}` +
      `${summary.skipped_already_present > 0 ? ` (${summary.skipped_already_present} were there already)` : ''}`,
  );
}
