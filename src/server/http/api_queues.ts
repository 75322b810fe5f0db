// /api/v1/queues: share groups (the queue model) with what they hold in flight and waiting, and
// what they redelivered, dead-lettered and expired since the broker started.
import type { Core, QueueStats } from '../../core/index.ts';
import { not_found } from './http_errors.ts';
import { compare_text, page_of, paging_of } from './request_params.ts';
import type { Router } from './router.ts';

function queue_summary(stats: QueueStats) {
  return {
    group_id: stats.group_id,
    topics: stats.topics,
    members: stats.members,
    in_flight: stats.in_flight,
    available: stats.available,
    redeliveries: stats.counters.redeliveries,
    dead_lettered: stats.counters.dead_lettered,
    expired: stats.counters.expired,
  };
}

function queue_detail(core: Core, group_id: string) {
  const stats = core.shares.queue_stats(group_id, { detail: true });
  if (!stats) throw not_found(`unknown share group ${group_id}`);
  const described = core.shares.describe(group_id);
  const settings = core.shares.settings_of(group_id);
  return {
    ...queue_summary(stats),
    members: (described?.members ?? []).map((m) => ({ member_id: m.member_id, member_epoch: m.member_epoch, client_id: m.client_id, host: m.client_host, topics: m.topics })),
    settings: {
      delivery_count_limit: settings.delivery_count_limit,
      record_lock_duration_ms: settings.record_lock_duration_ms,
      records_in_flight_max: settings.records_in_flight_max,
      retry_backoff_ms: settings.retry_backoff_ms,
      auto_offset_reset: settings.auto_offset_reset,
      dead_letter_topic: settings.dead_letter_topic || null,
      ordering: settings.ordering,
    },
    partitions: stats.partitions.map((p) => ({
      topic: p.topic,
      partition: p.partition,
      start_offset: p.start_offset,
      end_offset: p.end_offset,
      high_watermark: p.high_watermark,
      in_flight: p.in_flight,
      available: p.available,
      dead_letters_pending: p.dead_letters_pending,
      acquired: p.census?.acquired ?? p.in_flight,
      acknowledged: p.census?.acknowledged ?? 0,
      dead_lettering: p.census?.dead_lettering ?? 0,
      archived: p.census?.archived ?? 0,
      redelivering: p.census?.redelivering ?? 0,
      delivery_count_max: p.census?.delivery_count_max ?? 0,
    })),
  };
}

export function add_queue_routes(router: Router): void {
  router.add('GET', '/api/v1/queues', async (request, { core }) => {
    const ids = core.shares.group_ids().sort(compare_text);
    return { status: 200, body: await page_of(ids, paging_of(request.query), (id) => queue_summary(core.shares.queue_stats(id)!)) };
  });

  router.add('GET', '/api/v1/queues/:group', (request, { core }) => ({ status: 200, body: queue_detail(core, request.params.group!) }));
}
