// The broker's side of check-back (protocol/half_messages.ts). The transaction coordinator calls
// these for a half message's transaction left open past its timeout: a check request published for
// its group (again after each timeout), and after the last check its records copied to the
// unresolved topic before it is aborted, so no half message is dropped without a trace.
import { decompress_record_batch } from '../../protocol/compression.ts';
import {
  decode_record_batch,
  encode_record_batch,
  type BatchRecord,
  type DecodedRecord,
  type RecordHeader,
} from '../../protocol/record_batch.ts';
import {
  HALF_HEADERS,
  TXN_CHECKS_TOPIC,
  TXN_UNRESOLVED_TOPIC,
  check_headers,
  type CheckRequest,
} from '../../protocol/half_messages.ts';
import type { PartitionReader } from '../../core/partition_reader.ts';
import type { Clock } from '../../core/clock.ts';
import type { AppendRecords } from '../topics.ts';
import {
  ATTRIBUTE_CONTROL,
  ATTRIBUTE_TRANSACTIONAL,
  batch_attributes,
  batch_last_offset,
  batch_producer_id,
} from '../../format/batch_layout.ts';
import type { TxnMetadata } from './txn_log.ts';

/** Bytes asked of a log per read while looking for an open transaction's records. */
const READ_BYTES = 1024 * 1024;
/** Bytes looked through per partition at most (from its last stable offset). */
const SCAN_BYTES_MAX = 256 * 1024 * 1024;
/** Value bytes per batch appended to the unresolved topic (below its 1 MiB message limit). */
const COPY_BATCH_BYTES = 512 * 1024;

export interface HalfCheckDeps {
  clock: Clock;
  reader(topic: string, partition: number): Promise<PartitionReader>;
  append: AppendRecords;
  ensure_topic(name: string, partitions: number): Promise<void>;
}

/** What the coordinator asks of check-back. */
export interface HalfChecks {
  /** Appends a check request for each record of the open transaction (one, from the SDK). */
  publish_check(group: string, meta: TxnMetadata, check: number, checks_max: number): Promise<void>;
  /** Copies the open transaction's records to the unresolved topic; how many were copied. */
  copy_unresolved(group: string, meta: TxnMetadata): Promise<number>;
}

interface Found {
  topic: string;
  partition: number;
  record: DecodedRecord | null;
}

export function half_checks(deps: HalfCheckDeps): HalfChecks {
  const found_records = async (meta: TxnMetadata): Promise<Found[]> => {
    const found: Found[] = [];
    for (const { topic, partition } of meta.partitions) {
      for (const record of await open_records(await deps.reader(topic, partition), meta.producer_id)) {
        found.push({ topic, partition, record });
      }
    }
    return found;
  };
  return {
    async publish_check(group, meta, check, checks_max) {
      await deps.ensure_topic(TXN_CHECKS_TOPIC, 1);
      let found = await found_records(meta);
      // Its record gone (its topic deleted, say): the group is still asked, with the id alone.
      if (found.length === 0) found = [{ topic: meta.partitions[0]?.topic ?? '', partition: -1, record: null }];
      const now = deps.clock.now_ms();
      const records = found.map(({ topic, partition, record }) => {
        const request: CheckRequest = {
          group,
          transactional_id: meta.transactional_id,
          producer_id: meta.producer_id,
          producer_epoch: meta.producer_epoch,
          topic,
          partition,
          offset: record?.offset ?? -1,
          check,
          checks_max,
        };
        return copy_of(record, check_headers(request), now);
      });
      for (const chunk of chunks(records)) await deps.append(TXN_CHECKS_TOPIC, 0, encode_record_batch(chunk));
    },
    async copy_unresolved(group, meta) {
      await deps.ensure_topic(TXN_UNRESOLVED_TOPIC, 1);
      const now = deps.clock.now_ms();
      const records = (await found_records(meta)).map(({ topic, partition, record }) =>
        copy_of(
          record,
          [
            [HALF_HEADERS.group, group],
            [HALF_HEADERS.transactional_id, meta.transactional_id],
            [HALF_HEADERS.topic, topic],
            [HALF_HEADERS.partition, String(partition)],
            [HALF_HEADERS.offset, String(record!.offset)],
          ].map(([key, value]) => ({ key: key!, value: Buffer.from(value!) })),
          now,
        ),
      );
      for (const chunk of chunks(records)) await deps.append(TXN_UNRESOLVED_TOPIC, 0, encode_record_batch(chunk));
      return records.length;
    },
  };
}

/** A record's key, value, headers and timestamp, with `headers` added (a record of none: headers alone). */
function copy_of(record: DecodedRecord | null, headers: RecordHeader[], now_ms: number): BatchRecord {
  return {
    key: record?.key ?? null,
    value: record?.value ?? null,
    timestamp_ms: record?.timestamp_ms ?? now_ms,
    headers: [...(record?.headers ?? []), ...headers],
  };
}

/**
 * The records of `producer_id`'s open transaction in a partition: its batches between the last
 * stable offset (at or before the transaction's first) and the high watermark, after its last
 * marker there (a transactional id reused has earlier transactions of the same producer id).
 */
async function open_records(reader: PartitionReader, producer_id: number): Promise<DecodedRecord[]> {
  let found: DecodedRecord[] = [];
  let offset = reader.last_stable_offset;
  let scanned = 0;
  while (offset < reader.high_watermark && scanned < SCAN_BYTES_MAX) {
    const { batches } = await reader.read(offset, READ_BYTES);
    if (batches.length === 0) break;
    for (const batch of batches) {
      offset = batch_last_offset(batch, 0) + 1;
      scanned += batch.length;
      const attributes = batch_attributes(batch, 0);
      if ((attributes & ATTRIBUTE_TRANSACTIONAL) === 0 || batch_producer_id(batch, 0) !== producer_id) continue;
      if ((attributes & ATTRIBUTE_CONTROL) !== 0) {
        found = []; // an earlier transaction of this producer ended here
        continue;
      }
      found.push(...decode_record_batch(await decompress_record_batch(batch)));
    }
  }
  return found;
}

function* chunks(records: BatchRecord[]): Iterable<BatchRecord[]> {
  let chunk: BatchRecord[] = [];
  let bytes = 0;
  for (const record of records) {
    const size = (record.key?.length ?? 0) + (record.value?.length ?? 0);
    if (chunk.length > 0 && bytes + size > COPY_BATCH_BYTES) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(record);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}
