// /api/v1/dead-letters: the dead-letter topics share groups write (`<topic>.<group>.dlq`, or the
// topic a group's sluice.share.dlq.topic names), their messages with where each came from and why,
// and redrive (the broker core's, which keeps the same audit as `sluice dlq redrive`).
import { BrokerError, REDRIVE_OFFSETS_MAX, type Core } from '../../core/index.ts';
import { DLQ_HEADERS, dead_letter_origin_of, is_dead_letter_topic_name } from '../../protocol/dead_letters.ts';
import { header_text, type DecodedRecord } from '../../protocol/record_batch.ts';
import { HttpError, invalid_body, not_found } from './http_errors.ts';
import { MESSAGES_LIMIT_DEFAULT, MESSAGES_LIMIT_MAX, message_view, read_message_page } from './messages.ts';
import { body_object, compare_text, json_excerpt, page_of, paging_of, query_int } from './request_params.ts';
import type { Router } from './router.ts';
import { topic_of } from './api_topics.ts';

/** Dead-letter topics that exist, with the origin and group each name or config says. */
function dead_letter_topics(core: Core): Map<string, { origin_topic: string | null; group: string }> {
  const found = new Map<string, { origin_topic: string | null; group: string }>();
  for (const topic of core.topics.list()) {
    if (!is_dead_letter_topic_name(topic.name)) continue;
    const { origin, group } = dead_letter_origin_of(topic.name);
    found.set(topic.name, { origin_topic: origin, group });
  }
  for (const group of core.shares.group_ids()) {
    const configured = core.shares.settings_of(group).dead_letter_topic;
    if (configured && core.topics.get(configured) && !found.has(configured))
      found.set(configured, { origin_topic: null, group });
  }
  return found;
}

function dead_letter_topic_of(core: Core, name: string) {
  const topic = topic_of(core, name);
  const origin = dead_letter_topics(core).get(name);
  if (!origin)
    throw new HttpError(
      400,
      'not_dead_letter_topic',
      `${name} is not a dead-letter topic (its name does not end with .dlq and no share group sends dead letters ` +
        `to it)`,
    );
  return { topic, origin };
}

function number_or_null(text: string | null): number | null {
  return text === null || !/^-?\d+$/.test(text) ? null : Number(text);
}

function dead_letter_view(record: DecodedRecord) {
  return {
    ...message_view(record),
    origin_topic: header_text(record, DLQ_HEADERS.topic),
    origin_partition: number_or_null(header_text(record, DLQ_HEADERS.partition)),
    origin_offset: number_or_null(header_text(record, DLQ_HEADERS.offset)),
    group: header_text(record, DLQ_HEADERS.group),
    delivery_count: number_or_null(header_text(record, DLQ_HEADERS.delivery_count)),
    reason: header_text(record, DLQ_HEADERS.reason),
    dead_lettered_at_ms: number_or_null(header_text(record, DLQ_HEADERS.time_ms)),
  };
}

/** {offsets: [N | {partition, offset}, ...]} or {all: true}; a bare N is in partition 0. */
export function redrive_selection(body: Record<string, unknown>): Array<{ partition: number; offset: number }> | null {
  const all = body.all;
  const offsets = body.offsets;
  if (all !== undefined && all !== false && all !== true) throw invalid_body('all', 'all must be true or false');
  if (all === true && offsets !== undefined)
    throw invalid_body('offsets', 'give either offsets or all: true, not both');
  if (all === true) return null;
  if (!Array.isArray(offsets) || offsets.length === 0)
    throw invalid_body('offsets', 'choose what to redrive: offsets (a non-empty list) or all: true');
  if (offsets.length > REDRIVE_OFFSETS_MAX)
    throw invalid_body('offsets', `at most ${REDRIVE_OFFSETS_MAX} offsets per request`);
  return offsets.map((item) => {
    if (Number.isSafeInteger(item) && (item as number) >= 0) return { partition: 0, offset: item as number };
    if (typeof item === 'object' && item !== null) {
      const { partition, offset } = item as { partition?: unknown; offset?: unknown };
      if (
        Number.isSafeInteger(partition) &&
        (partition as number) >= 0 &&
        Number.isSafeInteger(offset) &&
        (offset as number) >= 0
      )
        return { partition: partition as number, offset: offset as number };
    }
    throw invalid_body(
      'offsets',
      `offsets items must be offsets (partition 0) or {"partition": P, "offset": N}, got ${json_excerpt(item)}`,
    );
  });
}

/** Messages a partition holds; 0 while a topic just created has no log here for it yet. */
function messages_in(core: Core, topic: string, partition: number): number {
  try {
    const log = core.partitions.reader_now(topic, partition);
    return log.high_watermark - log.log_start_offset;
  } catch (error) {
    if (error instanceof BrokerError && error.kind === 'not_leader_or_follower') return 0;
    throw error;
  }
}

export function add_dead_letter_routes(router: Router): void {
  router.add('GET', '/api/v1/dead-letters', async (request, { core }) => {
    const topics = [...dead_letter_topics(core)].sort(([a], [b]) => compare_text(a, b));
    const body = await page_of(topics, paging_of(request.query), ([name, origin]) => {
      const topic = core.topics.get(name)!;
      let messages = 0;
      for (let p = 0; p < topic.partitions; p++) messages += messages_in(core, name, p);
      return {
        topic: name,
        origin_topic: origin.origin_topic,
        group: origin.group,
        partitions: topic.partitions,
        messages,
      };
    });
    return { status: 200, body };
  });

  router.add('GET', '/api/v1/dead-letters/:topic/messages', async (request, { core }) => {
    const { topic } = dead_letter_topic_of(core, request.params.topic!);
    const partition = query_int(request.query, 'partition', 0, 0, topic.partitions - 1);
    const limit = query_int(request.query, 'limit', MESSAGES_LIMIT_DEFAULT, 1, MESSAGES_LIMIT_MAX);
    const offset = request.query.has('offset') ? query_int(request.query, 'offset', 0, 0) : null;
    const page = await read_message_page(
      core,
      await core.partitions.reader(topic.name, partition),
      offset,
      limit,
      dead_letter_view,
    );
    return { status: 200, body: { topic: topic.name, partition, ...page } };
  });

  router.add('POST', '/api/v1/dead-letters/:topic/redrive', async (request, { core }) => {
    const { topic } = dead_letter_topic_of(core, request.params.topic!);
    const body = body_object(await request.body());
    const offsets = redrive_selection(body);
    const to = body.to;
    if (to !== undefined && (typeof to !== 'string' || to === '')) throw invalid_body('to', 'to must be a topic name');
    if (typeof to === 'string' && !core.topics.get(to))
      throw invalid_body('to', `redrive to ${to}: the topic does not exist`);
    try {
      const outcome = await core.dead_letters.redrive({
        topic: topic.name,
        offsets,
        ...(typeof to === 'string' ? { to } : {}),
      });
      return { status: 200, body: outcome };
    } catch (error) {
      // The selection and the letters themselves are what the request named.
      if (error instanceof BrokerError && error.kind === 'invalid_request')
        throw invalid_body(offsets ? 'offsets' : 'to', error.message);
      if (error instanceof BrokerError && error.kind === 'unknown_topic_or_partition') throw not_found(error.message);
      throw error;
    }
  });
}
