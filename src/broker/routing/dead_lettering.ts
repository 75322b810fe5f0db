// Dead letters of a queue with a dead-letter exchange (x-dead-letter-exchange): instead of the
// share group's dead-letter topic, each goes through that exchange (with x-dead-letter-routing-key,
// or its own routing key) to the queues it routes to, as RabbitMQ does, carrying x-death (count,
// reason, queue, time, exchange, routing keys) and x-first-death-* / x-last-death-* headers, its
// expiration removed. A dead letter the exchange routes nowhere falls back to the dead-letter topic
// rather than being dropped.
import type { BatchRecord, DecodedRecord, RecordHeader } from '../../protocol/record_batch.ts';
import { decode_properties, encode_properties, type BasicProperties } from '../../protocol/amqp/properties.ts';
import type { FieldTable, FieldValue } from '../../protocol/amqp/field_table.ts';
import type { QueueRecord } from '../../core/types.ts';
import { HEADER_EXCHANGE, HEADER_PROPERTIES } from '../../protocol/amqp/record_headers.ts';
import type { DeadLetter } from '../queues/share_partition.ts';

/** Where a queue's dead letters go; null when the queue has no dead-letter exchange. */
export type DeadLetterRouter = (
  group_id: string,
  letters: readonly DeadLetter[],
  originals: ReadonlyMap<number, DecodedRecord>,
  now_ms: number,
) => Array<{ topic: string; records: BatchRecord[] }> | null;

/** RabbitMQ's reason words for the share engine's reasons. */
export function death_reason(reason: string): string {
  if (reason.startsWith('expired')) return 'expired';
  if (reason.startsWith('delivery limit')) return 'delivery_limit';
  if (reason.startsWith('maxlen')) return 'maxlen';
  return 'rejected';
}

function properties_of(record: Pick<DecodedRecord, 'headers'>): BasicProperties {
  const raw = record.headers?.find((h) => h.key === HEADER_PROPERTIES)?.value;
  return raw ? decode_properties(raw) : {};
}

/** The headers table with this death recorded (an earlier death in the same queue and reason counted up). */
export function with_death(
  headers: FieldTable,
  death: { queue: string; reason: string; exchange: string; routing_key: string; time_ms: number },
): FieldTable {
  const deaths = Array.isArray(headers['x-death']) ? (headers['x-death'] as FieldValue[]) : [];
  const same = (d: FieldValue) =>
    typeof d === 'object' && d !== null && !Array.isArray(d) && !Buffer.isBuffer(d) && !(d instanceof Date)
      ? (d as FieldTable)['queue'] === death.queue && (d as FieldTable)['reason'] === death.reason
      : false;
  const earlier = deaths.find(same) as FieldTable | undefined;
  const count = (typeof earlier?.['count'] === 'number' ? earlier['count'] : 0) + 1;
  const entry: FieldTable = {
    count,
    reason: death.reason,
    queue: death.queue,
    time: new Date(Math.floor(death.time_ms / 1000) * 1000),
    exchange: death.exchange,
    'routing-keys': [death.routing_key],
  };
  const first = deaths.length === 0;
  return {
    ...headers,
    'x-death': [entry, ...deaths.filter((d) => !same(d))],
    ...(first
      ? {
          'x-first-death-reason': death.reason,
          'x-first-death-queue': death.queue,
          'x-first-death-exchange': death.exchange,
        }
      : {}),
    'x-last-death-reason': death.reason,
    'x-last-death-queue': death.queue,
    'x-last-death-exchange': death.exchange,
  };
}

/** The dead letter as a message published to the dead-letter exchange. */
export function dead_letter_message(
  queue: QueueRecord,
  record: Pick<DecodedRecord, 'key' | 'value' | 'headers'>,
  reason: string,
  exchange: string,
  routing_key: string,
  now_ms: number,
): BatchRecord {
  const { expiration: _expired, ...properties } = properties_of(record);
  const original_exchange = record.headers?.find((h) => h.key === HEADER_EXCHANGE)?.value?.toString('utf8') ?? '';
  const original_key = record.key?.toString('utf8') ?? '';
  properties.headers = with_death(properties.headers ?? {}, {
    queue: queue.name,
    reason: death_reason(reason),
    exchange: original_exchange,
    routing_key: original_key,
    time_ms: now_ms,
  });
  const kept = (record.headers ?? []).filter(
    (h) => h.key !== HEADER_PROPERTIES && h.key !== HEADER_EXCHANGE && h.key !== 'amqp.expiration',
  );
  const headers: RecordHeader[] = [
    { key: HEADER_EXCHANGE, value: Buffer.from(exchange, 'utf8') },
    { key: HEADER_PROPERTIES, value: encode_properties(properties) },
    ...kept,
  ];
  return {
    key: routing_key === '' ? null : Buffer.from(routing_key, 'utf8'),
    value: record.value,
    timestamp_ms: now_ms,
    headers,
  };
}
