// The contract between the workload engine (engine.ts, workloads.ts) and a peer-broker driver
// (nats.ts, rabbitmq.ts, redis.ts): what a driver opens for one run (producers, consumers, queue
// consumers), the consumer tunables every driver applies, and how a system says it cannot run.
import type { Unavailable } from '../types.ts';

/** Messages a consumer may hold unacknowledged (AMQP prefetch, JetStream pull batch, XREADGROUP COUNT). */
export const CONSUMER_PREFETCH = 1000;

/** A consumer acknowledges cumulatively (or in one batch) every this many messages, and once at the end. */
export const CONSUMER_ACK_EVERY = 100;

/** Messages a queue-workload consumer may hold unacknowledged (AMQP prefetch); it acknowledges each on its own. */
export const QUEUE_PREFETCH = 500;

/** One producer connection. */
export interface PeerProducer {
  /** Publishes one message to destination `dest` (0-based index); resolves when the broker acknowledged it. */
  send(dest: number, payload: Buffer): Promise<void>;
  /** When the connection asks the sender to pause (socket buffer full), a promise to await before sending more. */
  backpressure(): Promise<void> | undefined;
  close(): Promise<void>;
}

/** One consumer connection. */
export interface PeerConsumer {
  /** Starts consuming destinations `dests`; on_message is called once per delivered message. */
  subscribe(dests: number[], on_message: (payload: Uint8Array) => void): Promise<void>;
  /** Acknowledges what is still unacknowledged, stops and closes. */
  close(): Promise<void>;
  /** An asynchronous failure (connection or channel error) seen since subscribe, if any. */
  failure(): Error | undefined;
}

/** What a broker driver provides to the workload engine for one run (one set of destinations). */
export interface PeerRun {
  /** Creates the destinations (queues / streams) and whatever consuming needs (consumer groups). */
  prepare(): Promise<void>;
  open_producer(): Promise<PeerProducer>;
  open_consumer(index: number): Promise<PeerConsumer>;
  /** Deletes the destinations and closes admin connections. */
  cleanup(): Promise<void>;
}

export type RunFactory = (partitions: number) => PeerRun;

/** A consumer for the queue workload: it acknowledges every message on its own. */
export interface PeerQueueConsumer {
  /**
   * Starts consuming destination `dest`: for each message, on_delivery when it arrives, then the
   * message's own acknowledgement is sent (handed to the connection), then on_acked.
   */
  subscribe(dest: number, on_delivery: () => void, on_acked: () => void): Promise<void>;
  /** Stops and closes (anything unacknowledged goes back to the queue). */
  close(): Promise<void>;
  /** An asynchronous failure (connection or channel error) seen since subscribe, if any. */
  failure(): Error | undefined;
}

/** A run that can also open queue-workload consumers. */
export interface QueuePeerRun extends PeerRun {
  open_queue_consumer(index: number): Promise<PeerQueueConsumer>;
}

export function unavailable(id: string, label: string, reason: string): Unavailable {
  return { id, label, reason };
}

export function is_unavailable<T extends object>(value: T | Unavailable): value is Unavailable {
  return 'reason' in value && !('start' in value);
}

export function error_text(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A unique, short run name for destinations. */
let run_counter = 0;

export function next_run_name(): string {
  run_counter++;
  return `r${process.pid.toString(36)}${Date.now().toString(36)}${run_counter}`;
}
