// /api/v1/topics: list (paged), create, describe, delete, change configs, and browse a
// partition's messages.
import { BrokerError, PARTITIONS_MAX, is_internal_topic, type Core, type TopicRecord } from '../../core/index.ts';
import { HttpError, invalid_body, not_found } from './http_errors.ts';
import { MESSAGES_LIMIT_DEFAULT, MESSAGES_LIMIT_MAX, message_view, read_message_page } from './messages.ts';
import {
  body_object,
  compare_text,
  optional_int,
  page_of,
  paging_of,
  query_bool,
  query_int,
  required_string,
  string_map,
} from './request_params.ts';
import type { Router } from './router.ts';

export function topic_of(core: Core, name: string): TopicRecord {
  const topic = core.topics.get(name);
  if (!topic) throw not_found(`unknown topic ${name}`);
  return topic;
}

/** Messages held (high watermark minus log start, over partitions) and bytes stored. */
function topic_size(core: Core, topic: TopicRecord): { messages: number; bytes: number } {
  let messages = 0;
  let bytes = 0;
  for (let p = 0; p < topic.partitions; p++) {
    const local = core.partitions.local_state(topic.name, p); // in a cluster, only the replicas held here count
    if (!local) continue;
    messages += local.high_watermark - local.log_start_offset;
    bytes += local.bytes;
  }
  return { messages, bytes };
}

function topic_summary(core: Core, topic: TopicRecord) {
  return {
    name: topic.name,
    id: topic.id,
    partitions: topic.partitions,
    internal: is_internal_topic(topic.name),
    ...topic_size(core, topic),
  };
}

function effective_configs(core: Core, topic: TopicRecord): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of core.topics.config_entries(topic)) out[entry.name] = entry.value;
  return out;
}

function topic_detail(core: Core, topic: TopicRecord) {
  const partitions = [];
  for (let p = 0; p < topic.partitions; p++) {
    const info = core.cluster.partition_info(topic.name, p);
    // Offsets as this broker's replica has them; -1 where it holds none.
    const local = core.partitions.local_state(topic.name, p);
    partitions.push({
      partition: p,
      leader: info.leader,
      replicas: info.replicas,
      isr: info.isr,
      log_start_offset: local?.log_start_offset ?? -1,
      high_watermark: local?.high_watermark ?? -1,
      log_end_offset: local?.log_end_offset ?? -1,
      bytes: local?.bytes ?? 0,
      segments: local?.segments ?? 0,
      offline: local?.offline ?? false,
      compaction: local?.compaction ?? null,
    });
  }
  return {
    name: topic.name,
    id: topic.id,
    internal: is_internal_topic(topic.name),
    created_ms: topic.created_ms,
    configs: { ...topic.configs },
    effective_configs: effective_configs(core, topic),
    partitions,
  };
}

export function add_topic_routes(router: Router): void {
  router.add('GET', '/api/v1/topics', async (request, { core }) => {
    const paging = paging_of(request.query);
    const internal = query_bool(request.query, 'internal', false);
    const topics = core.topics
      .list()
      .filter((t) => internal || !is_internal_topic(t.name))
      .sort((a, b) => compare_text(a.name, b.name));
    return { status: 200, body: await page_of(topics, paging, (t) => topic_summary(core, t)) };
  });

  router.add('POST', '/api/v1/topics', async (request, { core }) => {
    const body = body_object(await request.body());
    const name = required_string(body, 'name');
    if (is_internal_topic(name))
      throw invalid_body('name', `topic names starting with "__" are reserved for the broker`);
    const partitions = optional_int(body, 'partitions', 1, PARTITIONS_MAX) ?? core.topics.default_partitions;
    const configs = string_map(body.configs, 'configs');
    const created = await core.topics.create(name, partitions, configs);
    return { status: 201, body: topic_detail(core, created) };
  });

  router.add('GET', '/api/v1/topics/:name', (request, { core }) => ({
    status: 200,
    body: topic_detail(core, topic_of(core, request.params.name!)),
  }));

  router.add('DELETE', '/api/v1/topics/:name', async (request, { core }) => {
    const topic = topic_of(core, request.params.name!);
    if (is_internal_topic(topic.name))
      throw new HttpError(409, 'internal_topic', `internal topic ${topic.name} cannot be deleted`);
    await core.topics.delete(topic.name);
    return { status: 204 };
  });

  router.add('PATCH', '/api/v1/topics/:name/configs', async (request, { core }) => {
    const topic = topic_of(core, request.params.name!);
    const body = body_object(await request.body());
    const set = string_map(body.set, 'set');
    const remove = body.remove ?? [];
    if (!Array.isArray(remove) || remove.some((k) => typeof k !== 'string'))
      throw invalid_body('remove', 'remove must be a list of config names');
    try {
      await core.topics.set_configs(topic.name, set, { merge: true, remove: remove as string[] });
    } catch (error) {
      if (error instanceof BrokerError && error.kind === 'invalid_config') throw invalid_body('set', error.message);
      throw error;
    }
    const updated = topic_of(core, topic.name);
    return {
      status: 200,
      body: {
        name: updated.name,
        configs: { ...updated.configs },
        effective_configs: effective_configs(core, updated),
      },
    };
  });

  router.add('GET', '/api/v1/topics/:name/partitions/:partition/messages', async (request, { core }) => {
    const topic = topic_of(core, request.params.name!);
    const partition = Number(request.params.partition);
    if (!/^\d+$/.test(request.params.partition!) || partition >= topic.partitions)
      throw not_found(`topic ${topic.name} has no partition ${request.params.partition}`);
    const limit = query_int(request.query, 'limit', MESSAGES_LIMIT_DEFAULT, 1, MESSAGES_LIMIT_MAX);
    const offset = request.query.has('offset') ? query_int(request.query, 'offset', 0, 0) : null;
    const page = await read_message_page(
      core,
      await core.partitions.reader(topic.name, partition),
      offset,
      limit,
      message_view,
    );
    return { status: 200, body: { topic: topic.name, partition, ...page } };
  });
}
