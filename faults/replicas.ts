// The replicas' own logs at the end of a run, read from each broker's data directory once the
// brokers are stopped: every record as a read by `replica-<node id>`, and where the cluster's
// high watermark stood, so the checker can hold the copies to being identical below it.
import fs from 'node:fs';
import path from 'node:path';
import { crc32c } from '@node-rs/crc32';
import { batch_base_offset, batch_producer_epoch, batch_producer_id } from '../src/format/batch_layout.ts';
import { decode_record_batch } from '../src/protocol/record_batch.ts';
import type { ReadOp, ReplicaEndOp } from './checker/history.ts';
import { batches_in } from './nemesis.ts';

/** Bytes 21.. of a batch are covered by its CRC (at 17). */
const CRC_START = 21;

/** The records of one replica of `topic`-`partition`, stopping at the first batch that fails its CRC. */
export function replica_records(
  data_dir: string,
  node_id: number,
  topic: string,
  partition: number,
  at_ms: number,
): ReadOp[] {
  const dir = path.join(data_dir, `${topic}-${partition}`);
  if (!fs.existsSync(dir)) return [];
  const reads: ReadOp[] = [];
  for (const name of fs
    .readdirSync(dir)
    .filter((n) => n.endsWith('.log'))
    .sort()) {
    const file = fs.readFileSync(path.join(dir, name));
    for (const { at, bytes } of batches_in(file)) {
      const batch = file.subarray(at, at + bytes);
      if (crc32c(batch.subarray(CRC_START)) !== batch.readUInt32BE(17)) return reads;
      const header = {
        base_offset: batch_base_offset(batch, 0),
        producer_id: batch_producer_id(batch, 0),
        producer_epoch: batch_producer_epoch(batch, 0),
      };
      for (const record of decode_record_batch(batch)) {
        reads.push({
          kind: 'read',
          reader: `replica-${node_id}`,
          topic,
          partition,
          offset: record.offset,
          key: record.key?.toString() ?? null,
          value: record.value?.toString() ?? '',
          at_ms,
          batch: header,
        });
      }
    }
  }
  return reads;
}

/** Every replica's records of every partition, and one end marker per replica and partition. */
export function replica_history(
  data_dirs: ReadonlyMap<number, string>,
  topic: string,
  high_watermarks: ReadonlyMap<number, number>,
  at_ms: number,
): (ReadOp | ReplicaEndOp)[] {
  const ops: (ReadOp | ReplicaEndOp)[] = [];
  for (const [node_id, data_dir] of data_dirs) {
    for (const [partition, high_watermark] of high_watermarks) {
      for (const op of replica_records(data_dir, node_id, topic, partition, at_ms)) ops.push(op);
      ops.push({ kind: 'replica_end', node_id, topic, partition, high_watermark });
    }
  }
  return ops;
}
