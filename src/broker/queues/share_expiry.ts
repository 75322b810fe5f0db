// Records leaving a share group's queue other than by acknowledgement: those whose time to live
// ran out (dead-lettered or dropped, as the topic says) and the dead letters written to the
// group's dead-letter topic before their records are archived.
import { encode_record_batch } from '../../protocol/record_batch.ts';
import type { Logger } from '../../core/clock.ts';
import type { PartitionReader } from '../../core/partition_reader.ts';
import { rethrow_invariant } from '../../core/invariants.ts';
import type { AppendRecords, TopicManager } from '../topics.ts';
import { dead_letter_records, dead_letter_topic_name, read_records_at } from './dead_letters.ts';
import { reads_committed, type PartitionState, type ShareCounters, type ShareGroup } from './share_group.ts';
import type { DeadLetterRouter } from '../routing/dead_lettering.ts';

/** Expired records handled per partition per round. */
const EXPIRED_PER_ROUND_MAX = 10_000;
/** A record that expired ahead of a full window is looked at again after this long. */
const TTL_RETRY_MS = 1_000;
/** Dead letters written per partition per tick. */
const DEAD_LETTERS_PER_TICK = 1_000;

export interface ExpiryDeps {
  topics: TopicManager;
  logger: Logger;
  reader(topic: string, partition: number): Promise<PartitionReader>;
  /** Creates a dead-letter topic (one partition) if it does not exist. */
  ensure_dead_letter_topic(name: string): Promise<void>;
  append: AppendRecords;
  /** Routes a group's dead letters through its queue's dead-letter exchange; null: it has none. */
  route_dead_letters?: DeadLetterRouter;
}

/** Reads ahead for expiry times, then expires what is due; true when anything expired. */
export async function track_ttl(
  deps: ExpiryDeps,
  counters: ShareCounters,
  group: ShareGroup,
  state: PartitionState,
  log: PartitionReader,
  now_ms: number,
): Promise<boolean> {
  const configs = deps.topics.get(state.topic)?.configs ?? {};
  const topic_ttl_ms = Number(configs['sluice.message.ttl.ms'] ?? -1);
  const keys_until =
    group.settings.ordering === 'key' ? state.share.start_offset + group.settings.records_in_flight_max : null;
  await state.ahead.scan(log, now_ms, { topic_ttl_ms, keys_until, committed: reads_committed(group.settings) });
  const expired = state.ahead.take_expired(now_ms, EXPIRED_PER_ROUND_MAX);
  if (expired.length === 0) return false;
  const drop = configs['sluice.ttl.expired.action'] === 'drop';
  for (const offset of expired) {
    if (offset < state.share.start_offset) continue;
    const outcome = state.share.expire(offset, 'expired: its time to live ran out', drop);
    if (outcome === 'later') state.ahead.retry(offset, now_ms + TTL_RETRY_MS, now_ms);
    else if (outcome === 'expired') {
      counters.expired++;
      group.counters.expired++;
    }
  }
  return true;
}

/**
 * Copies pending dead letters to the group's dead-letter topic, then archives the records; true
 * when they were written (on failure they stay pending and are tried again next tick).
 */
export async function write_dead_letters(
  deps: ExpiryDeps,
  counters: ShareCounters,
  group: ShareGroup,
  state: PartitionState,
  now_ms: number,
): Promise<boolean> {
  const letters = state.letters.splice(0, DEAD_LETTERS_PER_TICK).sort((a, b) => a.offset - b.offset);
  try {
    const log = await deps.reader(state.topic, state.partition);
    const originals = await read_records_at(
      log,
      letters.map((l) => l.offset),
    );
    const routed = deps.route_dead_letters?.(group.id, letters, originals, now_ms) ?? null;
    const origin = { topic: state.topic, partition: state.partition, group: group.id };
    const records = routed ? routed.flatMap((r) => r.records) : dead_letter_records(origin, letters, originals, now_ms);
    for (const target of routed ?? []) await deps.append(target.topic, 0, encode_record_batch(target.records));
    if (!routed && records.length > 0) {
      const dlq = group.settings.dead_letter_topic || dead_letter_topic_name(state.topic, group.id);
      await deps.ensure_dead_letter_topic(dlq);
      const dlq_partitions = deps.topics.get(dlq)!.partitions;
      await deps.append(dlq, state.partition % dlq_partitions, encode_record_batch(records));
    }
    state.share.dead_lettered(letters.map((l) => l.offset));
    counters.dead_lettered += records.length;
    group.counters.dead_lettered += records.length;
    return true;
  } catch (error) {
    rethrow_invariant(error);
    state.letters.unshift(...letters);
    deps.logger.warn(
      { group: group.id, topic: state.topic, partition: state.partition, error: String(error) },
      'could not write dead letters; will retry',
    );
    return false;
  }
}
