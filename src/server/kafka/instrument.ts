// Counts traffic and times requests around the Kafka handlers, without touching them: each handler
// is wrapped once when the listener builds its table. Produce counts the batches of partitions that
// were accepted; Fetch and ShareFetch count what they hand out. Counts come from batch headers.
import type { KafkaHandler, RequestContext } from './handler.ts';
import type { Value } from '../../protocol/kafka/codec.ts';
import { PRODUCE } from '../../protocol/kafka/messages/00_produce.ts';
import { FETCH } from '../../protocol/kafka/messages/01_fetch.ts';
import { SHARE_FETCH } from '../../protocol/kafka/messages/78_share_fetch.ts';
import { records_in_batches } from '../../format/batch_layout.ts';
import { type Row, rows } from './handlers/util.ts';

export function instrument_handlers(table: ReadonlyMap<number, KafkaHandler>): ReadonlyMap<number, KafkaHandler> {
  const wrapped = new Map<number, KafkaHandler>();
  for (const [key, handler] of table) wrapped.set(key, instrument(handler));
  return wrapped;
}

function instrument(handler: KafkaHandler): KafkaHandler {
  const api = handler.api.name;
  const count = COUNTERS[handler.api.api_key];
  return {
    ...handler,
    async handle(request, ctx) {
      const started_ms = performance.now();
      try {
        const response = await handler.handle(request, ctx);
        count?.(request, response, ctx);
        return response;
      } finally {
        ctx.broker.stats.request_done(api, performance.now() - started_ms);
      }
    },
  };
}

type Counter = (request: Value, response: Value | null, ctx: RequestContext) => void;

const COUNTERS: Record<number, Counter> = {
  [PRODUCE.api_key]: count_produce,
  [FETCH.api_key]: count_fetch,
  [SHARE_FETCH.api_key]: count_share_fetch,
};

function count_produce(request: Value, response: Value | null, ctx: RequestContext): void {
  // acks=0 has no response: reaching here without an error means every partition was accepted.
  const accepted = new Set<string>();
  if (response !== null) {
    for (const topic of rows(response.responses)) {
      for (const p of rows(topic.partition_responses)) if (p.error_code === 0) accepted.add(`${topic.name as string}\u0000${p.index as number}`);
    }
  }
  for (const topic of rows(request.topic_data)) {
    const name = topic.name as string;
    for (const p of rows(topic.partition_data)) {
      const records = p.records as Buffer | null;
      if (!records || (response !== null && !accepted.has(`${name}\u0000${p.index as number}`))) continue;
      ctx.broker.stats.record_in(name, p.index as number, records_in_batches(records), records.length);
    }
  }
}

function topic_name(row: Row, ctx: RequestContext): string | undefined {
  if (typeof row.topic === 'string') return row.topic;
  if (typeof row.name === 'string') return row.name;
  return typeof row.topic_id === 'string' ? ctx.broker.topics.get_by_id(row.topic_id)?.name : undefined;
}

function batches_of(records: unknown): Buffer[] {
  if (Array.isArray(records)) return records as Buffer[];
  return Buffer.isBuffer(records) && records.length > 0 ? [records] : [];
}

/** Records what a fetch-like response hands out, per partition, as `measure` counts it. */
function count_out(response: Value | null, ctx: RequestContext, measure: (partition: Row) => { messages: number; bytes: number }): void {
  for (const topic of rows(response?.responses)) {
    const name = topic_name(topic, ctx);
    if (name === undefined) continue;
    for (const p of rows(topic.partitions)) {
      const { messages, bytes } = measure(p);
      ctx.broker.stats.record_out(name, p.partition_index as number, messages, bytes);
    }
  }
}

function count_fetch(_request: Value, response: Value | null, ctx: RequestContext): void {
  count_out(response, ctx, (p) => {
    let messages = 0;
    let bytes = 0;
    for (const batch of batches_of(p.records)) {
      messages += records_in_batches(batch);
      bytes += batch.length;
    }
    return { messages, bytes };
  });
}

/** A share fetch hands out the acquired records only, though it sends their whole batches. */
function count_share_fetch(_request: Value, response: Value | null, ctx: RequestContext): void {
  count_out(response, ctx, (p) => {
    let messages = 0;
    let bytes = 0;
    for (const range of rows(p.acquired_records)) messages += (range.last_offset as number) - (range.first_offset as number) + 1;
    for (const batch of batches_of(p.records)) bytes += batch.length;
    return { messages, bytes };
  });
}
