// Transaction markers: the control batches a transaction coordinator has written to every
// partition of a transaction when it commits or aborts. A marker is a batch with the transactional
// and control attribute bits, the producer's id and epoch, no sequence, and one record whose key
// is (version 0, type) and whose value is (version 0, the coordinator's epoch). Shared by the
// broker, which writes and reads them, and the SDK, which skips them and what they abort.
import {
  ATTRIBUTE_CONTROL,
  ATTRIBUTE_TRANSACTIONAL,
  BATCH_HEADER_BYTES,
  batch_attributes,
  batch_size_at,
} from '../format/batch_layout.ts';
import { RecordReader } from '../format/record_reader.ts';
import { encode_record_batch } from './record_batch.ts';

/** The control record types of a transaction's end (Kafka's ControlRecordType). */
export const ControlType = { ABORT: 0, COMMIT: 1 } as const;
export type ControlTypeCode = (typeof ControlType)[keyof typeof ControlType];

const KEY_BYTES = 4;
const VALUE_BYTES = 6;

export interface Marker {
  producer_id: number;
  producer_epoch: number;
  commit: boolean;
  /** The epoch of the coordinator that wrote it, so a marker of a deposed coordinator can be told. */
  coordinator_epoch: number;
  timestamp_ms: number;
}

/** A marker as one uncompressed batch (base offset 0, CRC set), ready to append. */
export function encode_marker(marker: Marker): Buffer {
  const key = Buffer.alloc(KEY_BYTES);
  key.writeInt16BE(marker.commit ? ControlType.COMMIT : ControlType.ABORT, 2);
  const value = Buffer.alloc(VALUE_BYTES);
  value.writeInt32BE(marker.coordinator_epoch, 2);
  return encode_record_batch([{ key, value, timestamp_ms: marker.timestamp_ms }], {
    producer_id: marker.producer_id,
    producer_epoch: marker.producer_epoch,
    base_sequence: -1,
    attributes: ATTRIBUTE_TRANSACTIONAL | ATTRIBUTE_CONTROL,
  });
}

export function is_control_batch(batch: Buffer, position = 0): boolean {
  return (batch_attributes(batch, position) & ATTRIBUTE_CONTROL) !== 0;
}

export function is_transactional_batch(batch: Buffer, position = 0): boolean {
  return (batch_attributes(batch, position) & ATTRIBUTE_TRANSACTIONAL) !== 0;
}

/**
 * The type of the control batch whose uncompressed records are `records` (its first record's key),
 * or null when it has no valid key. Control batches are never compressed.
 */
export function control_type(records: Buffer): number | null {
  if (records.length === 0) return null;
  const reader = new RecordReader(records, 0, records.length);
  reader.enter_record();
  reader.byte(); // attributes
  reader.varint(); // timestamp delta
  reader.varint(); // offset delta
  const key = reader.bytes();
  if (!key || key.length < KEY_BYTES) return null;
  return key.readInt16BE(2);
}

/** The control type of the marker batch at `position` of `batch`; null when it is not one. */
export function marker_type(batch: Buffer, position = 0): number | null {
  if (!is_control_batch(batch, position)) return null;
  return control_type(batch.subarray(position + BATCH_HEADER_BYTES, position + batch_size_at(batch, position)));
}
