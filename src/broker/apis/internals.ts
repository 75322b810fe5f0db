// What the core API's objects (topics_api.ts, partitions_api.ts, ...) use of the broker core: the
// Broker class provides it (broker.ts); the API objects see only this, so they import nothing
// back from the class that builds them.
import type { Clock } from '../../core/clock.ts';
import type { MetadataStore } from '../../core/metadata_store.ts';
import type { PartitionReader } from '../../core/partition_reader.ts';
import type { Placement } from '../../core/placement.ts';
import type { TopicPartition } from '../../core/types.ts';
import type { Marker } from '../../protocol/control_records.ts';
import type { Storage } from '../../storage/index.ts';
import type { BrokerSettings } from '../broker_settings.ts';
import type { Coordinators } from '../coordinators.ts';
import type { ProducePath } from '../produce_path.ts';
import type { ProducerStates } from '../producer_states.ts';
import type { TopicManager } from '../topics.ts';
import type { LogCleaner } from '../compaction/log_cleaner.ts';

export interface CoreInternals {
  readonly node_id: number;
  readonly clock: Clock;
  readonly monotonic_clock: Clock;
  readonly storage: Storage;
  readonly metadata: MetadataStore;
  readonly placement: Placement;
  readonly settings: BrokerSettings;
  readonly topic_index: TopicManager;
  readonly coordinators: Coordinators;
  readonly produce_path: ProducePath;
  readonly producer_states: ProducerStates;
  readonly cleaner: LogCleaner;
  partition_reader(topic: string, partition: number): Promise<PartitionReader>;
  partition_reader_now(topic: string, partition: number): PartitionReader;
  ensure_topic(name: string, allow_auto_create: boolean): Promise<void>;
  allocate_producer_id(): Promise<number>;
  produce_anywhere(topic: string, partition: number, records: Buffer): Promise<number>;
  /** Appends a transaction marker to a partition this broker leads. */
  write_marker_here(where: TopicPartition, marker: Marker): Promise<void>;
}
