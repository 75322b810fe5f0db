// Captures the fuzz corpus from real clients: starts a broker in this process (Kafka, AMQP and HTTP
// listeners, SASL users), puts a recording proxy in front of each listener, runs the client
// sessions of capture_clients.ts through the proxies, and writes every client-to-broker frame as a
// seed file: Kafka request frames (fuzz/corpus/kafka_request/), the record batches inside produce
// requests (record_batch/), AMQP frames (amqp_frame/) and HTTP requests (http_request/). Seeds are
// deduplicated and capped per kind; they replace the folders' earlier seeds, except crash-* inputs.
//
//   node --import tsx fuzz/capture.ts [--out DIR]
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CredentialStore } from '../src/broker/credentials.ts';
import { start_broker } from '../src/compose/start_broker.ts';
import { batch_compression } from '../src/format/batch_layout.ts';
import { message_codec } from '../src/protocol/kafka/codec.ts';
import { read_request_header, skip_header_tags } from '../src/protocol/kafka/header.ts';
import { PRODUCE } from '../src/protocol/kafka/messages/00_produce.ts';
import { Reader } from '../src/protocol/kafka/wire.ts';
import { CLIENT_SESSIONS, PASSWORD, USER, type Endpoints } from './capture_clients.ts';
import { COMMITTED_CORPUS } from './engine/supervisor.ts';
import { REPAIR } from './targets/record_batch.ts';

/** Seeds larger than the targets' inputs would be cut anyway. */
const SEED_BYTES_MAX = 64 * 1024;
const SESSION_TIMEOUT_MS = 90_000;
/** Inputs that once crashed a decoder, kept in the corpus as regression seeds (docs/fuzzing.md). */
const CRASH_PREFIX = 'crash-';

/** Distinct seeds, at most `per_kind` of each kind (an API and version, a frame type and method). */
class SeedSet {
  private readonly seeds = new Map<string, Buffer>();
  private readonly kinds = new Map<string, number>();

  constructor(private readonly per_kind: number) {}

  add(kind: string, bytes: Buffer): void {
    if (bytes.length > SEED_BYTES_MAX) return;
    const hash = crypto.createHash('sha1').update(bytes).digest('hex').slice(0, 16);
    const count = this.kinds.get(kind) ?? 0;
    if (this.seeds.has(hash) || count >= this.per_kind) return;
    this.seeds.set(hash, Buffer.from(bytes));
    this.kinds.set(kind, count + 1);
  }

  /** Replaces the folder's captured seeds (crash-* inputs stay); returns their count and total size. */
  write(dir: string): { files: number; bytes: number } {
    fs.mkdirSync(dir, { recursive: true });
    for (const name of fs.readdirSync(dir)) if (!name.startsWith(CRASH_PREFIX)) fs.rmSync(path.join(dir, name));
    let bytes = 0;
    for (const [hash, seed] of this.seeds) {
      fs.writeFileSync(path.join(dir, `${hash}.bin`), seed);
      bytes += seed.length;
    }
    return { files: this.seeds.size, bytes };
  }
}

const seeds = {
  kafka_request: new SeedSet(10),
  record_batch: new SeedSet(12),
  amqp_frame: new SeedSet(6),
  http_request: new SeedSet(3),
};

// ------------------------------------------------------------------ what each proxy records

/** A Kafka request frame, its correlation id zeroed (so repeats of one request are one seed). */
function on_kafka_frame(frame: Buffer): void {
  if (frame.length < 8) return; // a SASL v0 token, not a request
  const seed = Buffer.from(frame);
  seed.writeInt32BE(0, 4);
  seeds.kafka_request.add(`${seed.readInt16BE(0)}/${seed.readInt16BE(2)}`, seed);
  if (seed.readInt16BE(0) === PRODUCE.api_key) for (const batch of produced_batches(seed)) on_batch(batch);
}

/** The record batches of a produce request, decoded as the broker decodes them. */
function produced_batches(frame: Buffer): Buffer[] {
  const reader = new Reader(frame);
  const header = read_request_header(reader);
  const codec = message_codec(PRODUCE.request, header.api_version);
  if (codec.flexible) skip_header_tags(reader);
  const body = codec.decode(reader) as {
    topic_data: Array<{ partition_data: Array<{ records: Buffer | null }> }>;
  };
  return body.topic_data.flatMap((topic) => topic.partition_data.flatMap((p) => (p.records ? [p.records] : [])));
}

function on_batch(batch: Buffer): void {
  const delayed = batch.includes('sluice-') ? ' delayed' : '';
  seeds.record_batch.add(`${batch_compression(batch, 0)}${delayed}`, Buffer.concat([Buffer.from([REPAIR]), batch]));
}

function on_amqp_frame(frame: Buffer): void {
  const method = frame[0] === 1 && frame.length >= 11 ? `${frame.readUInt16BE(7)}/${frame.readUInt16BE(9)}` : '';
  seeds.amqp_frame.add(`${frame[0]} ${method}`, frame);
}

function on_http_request(request: Buffer): void {
  const line = request.toString('latin1', 0, Math.max(0, request.indexOf('\r\n')));
  seeds.http_request.add(line.replace(/\?.*$/, '').replace(/ HTTP.*$/, ''), request);
}

// ------------------------------------------------------------------ the recording proxy

type Framing = 'kafka' | 'amqp' | 'http';

/** Cuts the whole frames off the front of `pending`, handing each to `emit`; returns the rest. */
function cut_frames(framing: Framing, pending: Buffer, emit: (frame: Buffer) => void): Buffer {
  let at = 0;
  for (;;) {
    if (framing === 'kafka') {
      if (pending.length - at < 4) break;
      const end = at + 4 + pending.readInt32BE(at);
      if (end > pending.length) break;
      emit(pending.subarray(at + 4, end));
      at = end;
    } else {
      if (pending.length - at < 7) break;
      const end = at + 8 + pending.readUInt32BE(at + 3);
      if (end > pending.length) break;
      emit(pending.subarray(at, end));
      at = end;
    }
  }
  return pending.subarray(at);
}

interface RecordingProxy {
  port: number;
  target(port: number): void;
  close(): Promise<void>;
}

/** A loopback proxy that passes every byte on and hands each client-to-broker frame to `emit`. */
async function recording_proxy(framing: Framing, emit: (frame: Buffer) => void): Promise<RecordingProxy> {
  let target_port = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port: target_port });
    let pending: Buffer = Buffer.alloc(0);
    let skip = framing === 'amqp' ? 8 : 0; // the protocol header is not a frame
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      if (framing === 'http') return;
      const skipped = Math.min(skip, pending.length);
      skip -= skipped;
      pending = cut_frames(framing, pending.subarray(skipped), emit);
    });
    // One request per connection (the HTTP session sends Connection: close): the whole stream is it.
    client.once('close', () => framing === 'http' && pending.length > 0 && emit(pending));
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    target: (port) => void (target_port = port),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ------------------------------------------------------------------ main

async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no end after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: 'string', default: COMMITTED_CORPUS } } });
  const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-capture-'));
  const proxies = {
    kafka: await recording_proxy('kafka', on_kafka_frame),
    amqp: await recording_proxy('amqp', on_amqp_frame),
    http: await recording_proxy('http', on_http_request),
  };
  const loopback = (port: number) => ({ host: '127.0.0.1', port });
  const broker = await start_broker({
    data_dir,
    kafka: loopback(0),
    advertise: loopback(proxies.kafka.port), // clients come back through the proxy after Metadata
    http: loopback(0),
    amqp: loopback(0),
    credentials: await CredentialStore.from_passwords({ [USER]: PASSWORD }),
  });
  proxies.kafka.target(broker.kafka.bound_address.port); // kafka_address is the advertised one: the proxy
  proxies.amqp.target(broker.amqp_address!.port);
  proxies.http.target(broker.http_address!.port);
  const endpoints: Endpoints = {
    kafka: `127.0.0.1:${proxies.kafka.port}`,
    amqp: `127.0.0.1:${proxies.amqp.port}`,
    http: `127.0.0.1:${proxies.http.port}`,
  };
  for (const [name, session] of Object.entries(CLIENT_SESSIONS)) {
    const started = Date.now();
    await within(SESSION_TIMEOUT_MS, name, session(endpoints)).then(
      () => console.log(`${name}: done in ${Date.now() - started} ms`),
      (error: unknown) => console.log(`${name}: stopped early (${String(error)}); its frames so far are kept`),
    );
  }
  for (const proxy of Object.values(proxies)) await proxy.close();
  await broker.close();
  fs.rmSync(data_dir, { recursive: true, force: true });
  for (const [target, set] of Object.entries(seeds)) {
    const { files, bytes } = set.write(path.join(values.out, target));
    console.log(`${target}: ${files} seeds, ${bytes} bytes`);
  }
}

await main();
process.exit(0); // clients may leave timers behind (reconnects, heartbeats); the capture is written
