// The SDK's public entry: `import { Sluice } from 'sluice/sdk'`. The shape follows kafkajs, so
// moving an application is mostly a change of import:
//   const sluice = new Sluice({ brokers: ['127.0.0.1:9092'], clientId: 'billing' });
// const producer = sluice.producer(); const consumer = sluice.consumer({ groupId: 'g' }); const admin = sluice.admin();
// Each producer, consumer and admin has its own connections (its own Cluster).
import { Cluster, RETRY_DEFAULT, type RetryOptions } from './cluster.ts';
import { Producer, type ProducerConfig } from './producer.ts';
import { Consumer, type ConsumerConfig } from './consumer.ts';
import { Admin } from './admin.ts';
import { check_sasl_options, type SaslOptions } from './sasl.ts';
import { QueueConsumer, type QueueConsumerConfig } from './queue_consumer.ts';

export interface SluiceConfig {
  brokers: string[];
  clientId?: string;
  /** Request timeout in milliseconds (default 30 s). */
  requestTimeout?: number;
  retry?: { retries?: number; initialRetryTime?: number; maxRetryTime?: number };
  /** TLS for every connection: true for the system's certificate authorities, or node:tls options. */
  ssl?: boolean | import('node:tls').ConnectionOptions;
  /** SASL login on every connection: PLAIN or SCRAM-SHA-256/512 (use PLAIN only over TLS). */
  sasl?: SaslOptions;
}

export class Sluice {
  constructor(private readonly config: SluiceConfig) {
    if (!Array.isArray(config.brokers) || config.brokers.length === 0)
      throw new TypeError('Sluice: brokers must list at least one HOST:PORT');
    if (config.sasl) check_sasl_options(config.sasl);
  }

  private cluster(retry?: SluiceConfig['retry']): Cluster {
    const merged = { ...this.config.retry, ...retry };
    const options: RetryOptions = {
      retries: merged.retries ?? RETRY_DEFAULT.retries,
      initial_retry_ms: merged.initialRetryTime ?? RETRY_DEFAULT.initial_retry_ms,
      max_retry_ms: merged.maxRetryTime ?? RETRY_DEFAULT.max_retry_ms,
    };
    return new Cluster({
      brokers: this.config.brokers,
      client_id: this.config.clientId ?? 'sluice',
      retry: options,
      request_timeout_ms: this.config.requestTimeout ?? 30_000,
      max_in_flight: 5,
      tls: this.config.ssl === true ? {} : this.config.ssl || null,
      sasl: this.config.sasl ?? null,
    });
  }

  producer(config: ProducerConfig = {}): Producer {
    return new Producer(this.cluster(), config);
  }

  consumer(config: ConsumerConfig): Consumer {
    return new OwningConsumer(this.cluster(), config);
  }

  admin(): Admin {
    return new Admin(this.cluster());
  }

  /** A member of a share group: records shared among members, each settled on its own. */
  queueConsumer(config: QueueConsumerConfig): QueueConsumer {
    return new OwningQueueConsumer(this.cluster(), config);
  }
}

/** A queue consumer that closes the connections it was given when it disconnects. */
class OwningQueueConsumer extends QueueConsumer {
  constructor(
    private readonly owned: Cluster,
    config: QueueConsumerConfig,
  ) {
    super(owned, config);
  }

  override async disconnect(): Promise<void> {
    try {
      await super.disconnect();
    } finally {
      await this.owned.close();
    }
  }
}

/** A consumer that closes the connections it was given when it disconnects. */
class OwningConsumer extends Consumer {
  constructor(
    private readonly owned: Cluster,
    config: ConsumerConfig,
  ) {
    super(owned, config);
  }

  override async disconnect(): Promise<void> {
    try {
      await super.disconnect();
    } finally {
      await this.owned.close();
    }
  }
}

export { Producer, Consumer, Admin, QueueConsumer };
export type { ProducerConfig, ConsumerConfig, SaslOptions, QueueConsumerConfig };
export type { QueueMessagePayload, QueueRunConfig } from './queue_consumer.ts';
export { Transaction } from './producer_transaction.ts';
export { HalfMessage } from './half_messages.ts';
export type { HalfMessageCheck, TransactionCheckResult } from './producer_types.ts';
export type { ConsumerGroupMetadata, TransactionOffsets } from './producer_transaction.ts';
export type { EachTransactionPayload, TransactionalRunConfig } from './consumer_transactions.ts';
export {
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  ResourcePatternTypes,
  type AclEntry,
  type AclFilter,
  type DeleteAclResponse,
  type DescribeAclResponse,
} from './admin_acls.ts';
export type { ScramMechanismName, UserScramCredentials } from './admin_users.ts';
export {
  AdminError,
  AlterConfigOperation,
  ConfigResourceTypes,
  ConfigSource,
  type BrokerLogDirs,
  type ConfigDescription,
  type ConsumerGroupDescription,
  type DescribeConfigResponse,
  type LogCleanerProgress,
} from './admin_types.ts';
export type {
  ClientQuotaAlteration,
  ClientQuotaEntity,
  ClientQuotaEntry,
  ClientQuotaFilterComponent,
  ClientQuotaKey,
} from './admin_quotas.ts';
export * from './errors.ts';
export * from './dedupe.ts';
export { CompressionError } from '../protocol/compression.ts';
