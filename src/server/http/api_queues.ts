// /api/v1/queues: share groups (the queue model) with what they hold in flight and waiting, and
// what they redelivered, dead-lettered and expired since the broker started.
import { type Core, type QueueSettings, type QueueStats, type SettingValue, settings_of } from '../../core/index.ts';
import { not_found } from './http_errors.ts';
import { compare_text, page_of, paging_of } from './request_params.ts';
import type { Router } from './router.ts';

/** The settings a group can set for itself (Kafka group configs), shown under their HTTP names. */
const GROUP_SETTINGS = settings_of('share_groups').filter((s) => s.kafka !== undefined && s.names.http !== undefined);

/** A group's settings in force; an empty text (the dead-letter topic's default) shows as null. */
function settings_view(settings: QueueSettings): Record<string, SettingValue | null> {
  const fields = settings as unknown as Record<string, SettingValue>;
  return Object.fromEntries(GROUP_SETTINGS.map((s) => [s.names.http!, fields[s.key] === '' ? null : fields[s.key]!]));
}

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
  const members = (described?.members ?? []).map((m) => ({
    member_id: m.member_id,
    member_epoch: m.member_epoch,
    client_id: m.client_id,
    host: m.client_host,
    topics: m.topics,
  }));
  return {
    ...queue_summary(stats),
    members,
    settings: settings_view(core.shares.settings_of(group_id)),
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
    const body = await page_of(ids, paging_of(request.query), (id) => queue_summary(core.shares.queue_stats(id)!));
    return { status: 200, body };
  });

  router.add('GET', '/api/v1/queues/:group', (request, { core }) => ({
    status: 200,
    body: queue_detail(core, request.params.group!),
  }));
}
