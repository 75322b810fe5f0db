// Counts traffic and times requests around the Kafka handlers, without touching them: each handler
// is wrapped once when the listener builds its table. Produce counts the batches of partitions that
// were accepted; Fetch and ShareFetch count what they hand out. Counts come from batch headers.
import type { KafkaHandler, RequestContext } from './handler.ts';
import { PRODUCE } from '../../protocol/kafka/messages/00_produce.ts';
import { FETCH } from '../../protocol/kafka/messages/01_fetch.ts';
import { SHARE_FETCH } from '../../protocol/kafka/messages/78_share_fetch.ts';
import type { AnyMessage, RequestOf, ResponseIn } from '../../protocol/kafka/schema.ts';
import { records_in_batches } from '../../format/batch_layout.ts';

export function instrument_handlers(table: ReadonlyMap<number, KafkaHandler>): ReadonlyMap<number, KafkaHandler> {
  const wrapped = new Map<number, KafkaHandler>();
  for (const [key, handler] of table) wrapped.set(key, instrument(handler));
  return wrapped;
}

function instrument(handler: KafkaHandler): KafkaHandler {
  const api = handler.api.name;
  const count = COUNTERS.get(handler.api.api_key);
  return {
    ...handler,
    async handle(request, ctx) {
      const started_ms = performance.now();
      try {
        const response = await handler.handle(request, ctx);
        count?.(request, response, ctx);
        return response;
      } finally {
        ctx.core.stats.request_done(api, performance.now() - started_ms);
      }
    },
  };
}

/**
 * A counter sees the request and response of its own API: the table maps each API key to the
 * counter written for it, so the untyped values the wrapper holds are that API's messages.
 */
type Counter = (request: AnyMessage, response: AnyMessage | null, ctx: RequestContext) => void;

function counter<A extends typeof PRODUCE | typeof FETCH | typeof SHARE_FETCH>(
  _api: A,
  count: (request: RequestOf<A>, response: ResponseIn<A> | null, ctx: RequestContext) => void,
): Counter {
  return count as unknown as Counter;
}

const COUNTERS = new Map<number, Counter>([
  [PRODUCE.api_key, counter(PRODUCE, count_produce)],
  [FETCH.api_key, counter(FETCH, count_fetch)],
  [SHARE_FETCH.api_key, counter(SHARE_FETCH, count_share_fetch)],
]);

function count_produce(
  request: RequestOf<typeof PRODUCE>,
  response: ResponseIn<typeof PRODUCE> | null,
  ctx: RequestContext,
): void {
  // acks=0 has no response: reaching here without an error means every partition was accepted.
  const accepted = new Set<string>();
  if (response !== null) {
    for (const topic of response.responses ?? []) {
      for (const p of topic.partition_responses)
        if (p.error_code === 0) accepted.add(`${topic.name ?? ''}\u0000${p.index}`);
    }
  }
  for (const topic of request.topic_data) {
    for (const p of topic.partition_data) {
      const records = p.records;
      if (!records || (response !== null && !accepted.has(`${topic.name}\u0000${p.index}`))) continue;
      ctx.core.stats.record_in(topic.name, p.index, records_in_batches(records), records.length);
    }
  }
}

function batches_of(records: Buffer | readonly Buffer[] | null | undefined): readonly Buffer[] {
  if (Array.isArray(records)) return records;
  return Buffer.isBuffer(records) && records.length > 0 ? [records] : [];
}

function count_fetch(
  _request: RequestOf<typeof FETCH>,
  response: ResponseIn<typeof FETCH> | null,
  ctx: RequestContext,
): void {
  for (const topic of response?.responses ?? []) {
    for (const p of topic.partitions) {
      let messages = 0;
      let bytes = 0;
      for (const batch of batches_of(p.records)) {
        messages += records_in_batches(batch);
        bytes += batch.length;
      }
      ctx.core.stats.record_out(topic.topic ?? '', p.partition_index, messages, bytes);
    }
  }
}

/** A share fetch hands out the acquired records only, though it sends their whole batches. */
function count_share_fetch(
  _request: RequestOf<typeof SHARE_FETCH>,
  response: ResponseIn<typeof SHARE_FETCH> | null,
  ctx: RequestContext,
): void {
  for (const topic of response?.responses ?? []) {
    const name = ctx.core.topics.get_by_id(topic.topic_id)?.name;
    if (name === undefined) continue;
    for (const p of topic.partitions) {
      let messages = 0;
      let bytes = 0;
      for (const range of p.acquired_records) messages += range.last_offset - range.first_offset + 1;
      for (const batch of batches_of(p.records)) bytes += batch.length;
      ctx.core.stats.record_out(name, p.partition_index, messages, bytes);
    }
  }
}
