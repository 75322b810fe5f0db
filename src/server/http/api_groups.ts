// /api/v1/groups: consumer groups (either protocol) with their members, committed offsets and
// lag, and resetting a memberless group's offsets.
import type { Core, OffsetCommitEntry, PartitionLag } from '../../core/index.ts';
import { HttpError, invalid_body, not_found } from './http_errors.ts';
import { decode_consumer_assignment } from './consumer_assignment.ts';
import { type JsonObject, body_object, compare_text, page_of, paging_of, required_string } from './request_params.ts';
import type { Router } from './router.ts';

function total_lag(lags: readonly PartitionLag[]): number {
  let total = 0;
  for (const l of lags) total += l.lag;
  return total;
}

async function group_summary(core: Core, group_id: string) {
  const summary = core.groups.describe(group_id);
  return {
    group_id,
    state: summary.state,
    protocol_type: summary.protocol_type || 'consumer',
    members: summary.members.length,
    lag: total_lag(await core.groups.lag(group_id)),
  };
}

async function group_detail(core: Core, group_id: string) {
  const summary = core.groups.describe(group_id);
  if (summary.state === 'dead') throw not_found(`unknown group ${group_id}`);
  const members = summary.members.map((m) => ({
    member_id: m.member_id,
    group_instance_id: m.group_instance_id,
    client_id: m.client_id,
    host: m.client_host,
    assignments: decode_consumer_assignment(m.assignment),
  }));
  const offsets: Array<{
    topic: string;
    partition: number;
    committed: number | null;
    high_watermark: number;
    lag: number | null;
  }> = await core.groups.lag(group_id);
  // Assigned partitions without a commit yet have no lag to report, but belong in the view.
  const known = new Set(offsets.map((o) => `${o.topic}\u0000${o.partition}`));
  for (const member of members) {
    for (const { topic, partitions } of member.assignments) {
      const record = core.topics.get(topic);
      for (const partition of partitions) {
        if (!record || partition >= record.partitions || known.has(`${topic}\u0000${partition}`)) continue;
        known.add(`${topic}\u0000${partition}`);
        offsets.push({
          topic,
          partition,
          committed: null,
          high_watermark: core.partitions.reader_now(topic, partition).high_watermark,
          lag: null,
        });
      }
    }
  }
  offsets.sort((a, b) => compare_text(a.topic, b.topic) || a.partition - b.partition);
  let lag = 0;
  for (const o of offsets) lag += o.lag ?? 0;
  return {
    group_id,
    state: summary.state,
    protocol_type: summary.protocol_type || 'consumer',
    protocol: summary.protocol_name,
    generation_id: summary.generation_id,
    members,
    offsets,
    lag,
  };
}

type ResetTarget = 'earliest' | 'latest' | { offset: number } | { timestamp_ms: number };

export function reset_target(value: unknown): ResetTarget {
  if (value === 'earliest' || value === 'latest') return value;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const target = value as JsonObject;
    const keys = Object.keys(target);
    if (
      keys.length === 1 &&
      typeof target.offset === 'number' &&
      Number.isSafeInteger(target.offset) &&
      target.offset >= 0
    )
      return { offset: target.offset };
    if (keys.length === 1 && typeof target.timestamp_ms === 'number' && Number.isSafeInteger(target.timestamp_ms))
      return { timestamp_ms: target.timestamp_ms };
  }
  throw invalid_body('to', 'to must be "earliest", "latest", {"offset": N} or {"timestamp_ms": N}');
}

/** Offsets moved under running consumers would be overwritten by their next commit. */
function refuse_if_members(core: Core, group_id: string): void {
  const members = core.groups.describe(group_id).members.length;
  if (members > 0)
    throw new HttpError(
      409,
      'group_not_empty',
      `group ${group_id} has ${members} member(s); stop its consumers before resetting offsets`,
    );
}

export function add_group_routes(router: Router): void {
  router.add('GET', '/api/v1/groups', async (request, { core }) => {
    const paging = paging_of(request.query);
    const ids = core.groups
      .list()
      .map((g) => g.group_id)
      .sort(compare_text);
    return { status: 200, body: await page_of(ids, paging, (id) => group_summary(core, id)) };
  });

  router.add('GET', '/api/v1/groups/:id', async (request, { core }) => ({
    status: 200,
    body: await group_detail(core, request.params.id!),
  }));

  router.add('POST', '/api/v1/groups/:id/offsets/reset', async (request, { core }) => {
    const group_id = request.params.id!;
    const body = body_object(await request.body());
    const topic_name = required_string(body, 'topic');
    const topic = core.topics.get(topic_name);
    if (!topic) throw invalid_body('topic', `unknown topic ${topic_name}`);
    const to = reset_target(body.to);
    let partitions: number[];
    if (body.partitions === undefined || body.partitions === null)
      partitions = Array.from({ length: topic.partitions }, (_, i) => i);
    else if (
      Array.isArray(body.partitions) &&
      body.partitions.length > 0 &&
      body.partitions.every((p) => Number.isInteger(p) && p >= 0 && p < topic.partitions)
    )
      partitions = [...new Set(body.partitions as number[])].sort((a, b) => a - b);
    else
      throw invalid_body(
        'partitions',
        `partitions must be a non-empty list of partition numbers below ${topic.partitions}`,
      );
    refuse_if_members(core, group_id);
    const entries: OffsetCommitEntry[] = [];
    for (const partition of partitions) {
      const log = await core.partitions.reader(topic.name, partition);
      let offset: number;
      if (to === 'earliest') offset = log.log_start_offset;
      else if (to === 'latest') offset = log.high_watermark;
      else if ('offset' in to) offset = Math.min(Math.max(to.offset, log.log_start_offset), log.high_watermark);
      else offset = (await log.offset_for_timestamp(to.timestamp_ms))?.offset ?? log.high_watermark;
      entries.push({ topic: topic.name, partition, offset, metadata: null, leader_epoch: -1 });
    }
    refuse_if_members(core, group_id); // one may have joined while timestamps were looked up
    await core.groups.commit(group_id, entries);
    return {
      status: 200,
      body: {
        group_id,
        topic: topic.name,
        partitions: entries.map((e) => ({ partition: e.partition, offset: e.offset })),
      },
    };
  });
}
