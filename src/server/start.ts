// The composition root: a broker core plus its listeners, started and stopped together. Used by
// `sluice start` and by tests and applications that embed a broker.
import { Broker, type BrokerOptions } from '../broker/broker.ts';
import { KafkaListener } from './kafka/listener.ts';
import type { ConnectionLimits } from './kafka/connection.ts';
import { SILENT_LOGGER, type Logger } from '../storage/index.ts';
import type { CredentialStore } from '../broker/credentials.ts';
import { type ConsoleHandler, HttpListener } from './http/server.ts';

export interface StartOptions extends Omit<BrokerOptions, 'node_id'> {
  node_id?: number;
  kafka?: { host: string; port: number };
  advertise?: { host: string; port: number };
  limits?: Partial<ConnectionLimits>;
  /** Require SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) on the Kafka listener with these users. */
  credentials?: CredentialStore | null;
  /** The HTTP admin API, metrics and console; none when absent. */
  http?: { host: string; port: number } | null;
  /** Serves GETs outside /api on the HTTP listener (the web console). */
  console_handler?: ConsoleHandler | null;
  logger?: Logger;
}

export interface RunningBroker {
  broker: Broker;
  kafka: KafkaListener;
  /** Host and port of the Kafka listener as clients should use them. */
  kafka_address: { host: string; port: number };
  http: HttpListener | null;
  /** Host and port of the HTTP listener, null when it is off. */
  http_address: { host: string; port: number } | null;
  /** Stop accepting, answer requests in flight, flush and close storage. */
  close(): Promise<void>;
}

export async function start_broker(options: StartOptions): Promise<RunningBroker> {
  const logger = options.logger ?? SILENT_LOGGER;
  const broker = await Broker.start({ ...options, node_id: options.node_id ?? 1, logger });
  const bind = options.kafka ?? { host: '127.0.0.1', port: 9092 };
  const kafka = new KafkaListener(broker, {
    host: bind.host,
    port: bind.port,
    advertised_host: options.advertise?.host,
    advertised_port: options.advertise?.port,
    limits: options.limits,
    credentials: options.credentials ?? null,
    logger,
  });
  try {
    await kafka.listen();
    // A cluster member registers the address it is reachable at, so it joins once listening.
    await broker.join_cluster(kafka.address);
  } catch (error) {
    await kafka.close();
    await broker.close();
    throw error;
  }
  const http = options.http ? new HttpListener({ ...options.http, broker, kafka, logger, console_handler: options.console_handler ?? null }) : null;
  try {
    await http?.listen();
  } catch (error) {
    await kafka.close();
    await broker.close();
    throw error;
  }
  let closing: Promise<void> | null = null;
  return {
    broker,
    kafka,
    kafka_address: kafka.address,
    http,
    http_address: http?.address ?? null,
    close: () => {
      closing ??= (async () => {
        // /readyz turns 503 first; the HTTP listener goes last so probes see the whole shutdown.
        http?.begin_shutdown();
        try {
          // Pending joins and syncs would otherwise hold their connections for a rebalance timeout.
          if (broker.is_group_coordinator) broker.groups.close();
          await kafka.close();
          await broker.close();
        } finally {
          await http?.close();
        }
      })();
      return closing;
    },
  };
}

/** The in-process API for embedding, in the SDK's naming style. */
export const startBroker = start_broker;
