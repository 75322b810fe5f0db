// The core API's data path (core/api.ts PartitionsApi): produce, the sources Fetch and ListOffsets
// read, deleting records, and reads for tools. Which broker leads a partition is the placement's
// answer; a partition led elsewhere is refused with not_leader_or_follower, as clients expect.
import type { PartitionsApi } from '../../core/api.ts';
import { BrokerError } from '../../core/errors.ts';
import type { CoreInternals } from './internals.ts';
import { read_records } from '../log_reader.ts';
import { log_transactions } from '../local_reader.ts';

export function partitions_api(broker: CoreInternals): PartitionsApi {
  const { topic_index: topics, placement } = broker;
  return {
    async produce(topic, partition, records, acks, options) {
      if (!options?.forward || placement.is_leader(topic, partition))
        return broker.produce_path.produce(topic, partition, records, acks, options);
      const base_offset = await placement.forward(topic, partition, records, !options.broker_append);
      return { base_offset, log_append_time_ms: -1, log_start_offset: -1 };
    },
    consumer_source(topic, partition) {
      topics.check(topic, partition);
      return placement.read_log(topic, partition);
    },
    transactions(topic, partition) {
      topics.check(topic, partition);
      const log = placement.read_log(topic, partition);
      return log_transactions(log, () => broker.producer_states.of(log.name).txns);
    },
    replica_source(replica_id, topic, partition, fetch_offset, current_leader_epoch) {
      topics.check(topic, partition);
      return placement.replica_fetch(replica_id, topic, partition, fetch_offset, current_leader_epoch);
    },
    end_offset_for_epoch(topic, partition, epoch, current_leader_epoch) {
      topics.check(topic, partition);
      return placement.end_offset_for_epoch(topic, partition, epoch, current_leader_epoch);
    },
    async delete_records(topic, partition, offset) {
      topics.check(topic, partition);
      const log = placement.read_log(topic, partition);
      const before = offset === -1 ? log.high_watermark : offset;
      if (before > log.high_watermark || before < 0) {
        throw new BrokerError(
          'offset_out_of_range',
          `${topic}-${partition}: offset ${offset} is outside 0..${log.high_watermark}`,
        );
      }
      return log.delete_records_before(before);
    },
    active_producers(topic, partition) {
      topics.check(topic, partition);
      return broker.producer_states.of(placement.read_log(topic, partition).name).describe();
    },
    reader: (topic, partition) => broker.partition_reader(topic, partition),
    reader_now: (topic, partition) => broker.partition_reader_now(topic, partition),
    read_records,
    local_state(topic, partition) {
      const log = topics.local_log(topic, partition);
      if (!log) return null;
      return {
        log_start_offset: log.log_start_offset,
        high_watermark: log.high_watermark,
        log_end_offset: log.written_offset,
        bytes: log.size_bytes,
        segments: log.segment_count,
        offline: log.is_offline,
        compaction: broker.cleaner.status(log.name),
      };
    },
    compaction: () => broker.cleaner.statuses_now(),
    offline() {
      const offline: string[] = [];
      for (const name of broker.storage.partition_names())
        if (broker.storage.partition(name)?.is_offline) offline.push(name);
      return offline;
    },
    cut_at_recovery: () =>
      broker.storage.partition_names().filter((name) => broker.storage.partition(name)?.recovery_cut),
    allocate_producer_id: () => broker.allocate_producer_id(),
  };
}
