// The fault suite's AMQP workload: amqplib publishers with confirms and consumers with manual acks
// on one durable queue while faults happen. The queue is the Kafka topic AMQP_QUEUE (created like
// the others, three replicas, two in sync for an acknowledgement) bound as a queue, so confirms
// mean what acks=all means. Every publish is recorded with its outcome (confirmed, nacked, or not
// known: a timeout, a lost connection) and every delivery a consumer acknowledged, so the checker
// holds the run to: a confirmed message is delivered, and none is delivered and acknowledged more
// often than the bound. Clients connect to any broker and move to another when theirs goes; a
// consumer refused because another broker coordinates share groups goes to the one named, and a
// consumer its broker cancels (the coordinator moved) subscribes again.
import { setTimeout as sleep } from 'node:timers/promises';
import amqp from 'amqplib';
import type { AmqpAckOp, AmqpPublishOp, HistoryOp } from './checker/history.ts';
import { drain_until_received } from './workload.ts';

export const AMQP_QUEUE = 'faults-amqp';
export const AMQP_PORT = 5672;
const PUBLISHERS = 2;
const CONSUMERS = 2;
/** Messages a publisher has unconfirmed at once. */
const WINDOW = 10;
/**
 * Deliveries a consumer holds unacknowledged. Each fetch waits for its acquisition to be stored on
 * the in-sync replicas, so a small prefetch (20 once) kept the consumers below the publishers'
 * rate and left a backlog the drain could not read in time (seed 1919).
 */
const PREFETCH = 100;
/** A window not confirmed within this long is recorded as unknown and its connection dropped. */
const CONFIRM_TIMEOUT_MS = 10_000;
const CONNECT_TIMEOUT_MS = 2_000;
/** Any other call to the broker (a channel, a close): a client waits no longer, so none hangs a run. */
const CALL_TIMEOUT_MS = 5_000;
const RECONNECT_MS = 300;

/** A broker's AMQP listener: amqps when the lab's brokers take TLS (`ca`: the authority to trust). */
export interface AmqpTarget {
  host: string;
  ca: Buffer | null;
}

const url_of = ({ host, ca }: AmqpTarget) =>
  `${ca ? 'amqps' : 'amqp'}://guest:guest@${host}:${AMQP_PORT}?heartbeat=2&frameMax=131072`;

/** `call`, or a rejection once `ms` passed (a broker cut off mid-handshake never answers). */
async function bounded<T>(call: Promise<T>, ms = CALL_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function connect(target: AmqpTarget): Promise<amqp.ChannelModel> {
  const tls = target.ca ? { ca: [target.ca] } : {};
  const connecting = amqp.connect(url_of(target), { timeout: CONNECT_TIMEOUT_MS, ...tls });
  // One that connects after the bound is closed at once.
  connecting.then((c) => c.on('error', () => undefined)).catch(() => undefined);
  return await bounded(connecting, CONNECT_TIMEOUT_MS + CALL_TIMEOUT_MS);
}

/** connection.close, or the socket destroyed when the broker does not answer it (paused, cut off). */
async function close_quietly(connection: amqp.ChannelModel | null): Promise<void> {
  if (!connection) return;
  try {
    await bounded(connection.close());
  } catch {
    (connection.connection as unknown as { stream?: { destroy(): void } }).stream?.destroy();
  }
}

/** Resolves when `connection` closes or errs (a broker gone, a channel exception that closed it). */
function closed(connection: amqp.ChannelModel): Promise<void> {
  return new Promise((resolve) => {
    connection.once('close', () => resolve());
    connection.once('error', () => resolve());
  });
}

/** Publishes windows of confirmed messages until `until()` is false, moving between brokers. */
async function publisher(
  name: string,
  hosts: AmqpTarget[],
  started_ms: number,
  until: () => boolean,
  history: HistoryOp[],
): Promise<void> {
  const at = () => Date.now() - started_ms;
  let sequence = 0;
  for (let turn = 0; until(); turn++) {
    let connection: amqp.ChannelModel | null = null;
    try {
      connection = await connect(hosts[turn % hosts.length]!);
      const gone = closed(connection);
      const channel = await bounded(connection.createConfirmChannel());
      channel.on('error', () => undefined);
      while (until()) {
        const window = Array.from({ length: WINDOW }, () => `${name}-${sequence++}`);
        const invoked_ms = at();
        const ops: AmqpPublishOp[] = [];
        const confirms = window.map(
          (value) =>
            new Promise<void>((resolve) => {
              const op: AmqpPublishOp = {
                kind: 'amqp_publish',
                process: name,
                queue: AMQP_QUEUE,
                value,
                outcome: 'unknown',
                invoked_ms,
                completed_ms: -1,
              };
              ops.push(op);
              channel.sendToQueue(AMQP_QUEUE, Buffer.from(value), { persistent: true, messageId: value }, (error) => {
                op.outcome = error ? 'fail' : 'ok';
                op.completed_ms = at();
                resolve();
              });
            }),
        );
        const settled = await Promise.race([
          Promise.all(confirms).then(() => true),
          gone.then(() => false),
          sleep(CONFIRM_TIMEOUT_MS).then(() => false),
        ]);
        for (const op of ops) {
          if (op.completed_ms < 0) op.completed_ms = at();
          history.push(op);
        }
        if (!settled) break;
      }
    } catch {
      // refused or cut off: the next broker
    } finally {
      await close_quietly(connection);
    }
    if (until()) await sleep(RECONNECT_MS);
  }
}

/** The broker named in a refusal of basic.consume ("connect to broker N to consume"), if any. */
function named_broker(error: unknown): number | null {
  const match = /connect to broker (\d+) to consume/.exec(String(error));
  return match ? Number(match[1]) : null;
}

/** Consumes with manual acks until `stopped()`, moving to the broker that coordinates share groups. */
async function consumer(
  name: string,
  hosts: AmqpTarget[],
  started_ms: number,
  stopped: () => boolean,
  history: HistoryOp[],
  acked: Set<string>,
): Promise<void> {
  let turn = Number(name.slice(name.lastIndexOf('-') + 1));
  while (!stopped()) {
    let connection: amqp.ChannelModel | null = null;
    let next: number | null = null;
    try {
      connection = await connect(hosts[turn % hosts.length]!);
      const gone = closed(connection);
      const channel = await bounded(connection.createChannel());
      const refused = new Promise<void>((resolve) =>
        channel.once('error', (error: unknown) => {
          next = named_broker(error);
          resolve();
        }),
      );
      let cancelled!: () => void;
      const cancel = new Promise<void>((resolve) => (cancelled = resolve));
      await bounded(channel.prefetch(PREFETCH));
      await bounded(
        channel.consume(AMQP_QUEUE, (message) => {
          if (message === null) return cancelled(); // the broker cancelled the consumer
          const value = message.content.toString();
          const op: AmqpAckOp = {
            kind: 'amqp_ack',
            consumer: name,
            queue: AMQP_QUEUE,
            value,
            redelivered: message.fields.redelivered,
            at_ms: Date.now() - started_ms,
          };
          channel.ack(message);
          history.push(op);
          acked.add(value);
        }),
      );
      const until_stopped = (async () => {
        while (!stopped()) await sleep(250);
      })();
      await Promise.race([gone, refused, cancel, until_stopped]);
    } catch (error) {
      next ??= named_broker(error);
    } finally {
      await close_quietly(connection);
    }
    // Broker N is hosts[N - 1]: node ids are given in order.
    turn = next !== null ? next - 1 : turn + 1;
    if (!stopped()) await sleep(RECONNECT_MS);
  }
}

/** The queue, declared over AMQP on the topic made for it, and its publishers and consumers. */
export async function amqp_workload(
  hosts: AmqpTarget[],
  started_ms: number,
  until: () => boolean,
  history: HistoryOp[],
) {
  const declaring = await connect(hosts[0]!);
  await (await declaring.createChannel()).assertQueue(AMQP_QUEUE, { durable: true });
  await declaring.close();
  const acked = new Set<string>();
  let stop = false;
  const publishing = Array.from({ length: PUBLISHERS }, (_, i) =>
    publisher(`a${i}`, hosts, started_ms, until, history),
  );
  const consuming = Array.from({ length: CONSUMERS }, (_, i) =>
    consumer(`amqp-${i}`, hosts, started_ms, () => stop, history, acked),
  );
  return {
    publishing: Promise.all(publishing).then(() => undefined),
    /** Waits until every confirmed message was delivered (while more keep coming); returns how many were not. */
    async drain(): Promise<number> {
      const wanted = history
        .filter((op): op is AmqpPublishOp => op.kind === 'amqp_publish' && op.outcome === 'ok')
        .map((op) => op.value);
      await drain_until_received(wanted, acked);
      stop = true;
      await Promise.allSettled(consuming);
      return wanted.filter((value) => !acked.has(value)).length;
    },
  };
}
