// Admin handlers: topics (create, delete, add partitions, delete records), configs (describe,
// alter, incremental alter), producer ids, leader epochs and cluster description.
import { CREATE_TOPICS } from '../../../protocol/kafka/messages/19_create_topics.ts';
import { DELETE_TOPICS } from '../../../protocol/kafka/messages/20_delete_topics.ts';
import { DELETE_RECORDS } from '../../../protocol/kafka/messages/21_delete_records.ts';
import { INIT_PRODUCER_ID } from '../../../protocol/kafka/messages/22_init_producer_id.ts';
import { ALTER_PARTITION_REASSIGNMENTS } from '../../../protocol/kafka/messages/45_alter_partition_reassignments.ts';
import { LIST_PARTITION_REASSIGNMENTS } from '../../../protocol/kafka/messages/46_list_partition_reassignments.ts';
import { OFFSET_FOR_LEADER_EPOCH } from '../../../protocol/kafka/messages/23_offset_for_leader_epoch.ts';
import { DESCRIBE_CONFIGS } from '../../../protocol/kafka/messages/32_describe_configs.ts';
import { ALTER_CONFIGS } from '../../../protocol/kafka/messages/33_alter_configs.ts';
import { CREATE_PARTITIONS } from '../../../protocol/kafka/messages/37_create_partitions.ts';
import { INCREMENTAL_ALTER_CONFIGS } from '../../../protocol/kafka/messages/44_incremental_alter_configs.ts';
import { DESCRIBE_CLUSTER } from '../../../protocol/kafka/messages/60_describe_cluster.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { BrokerError } from '../../../broker/errors.ts';
import { config_default, config_names, type TopicConfigs } from '../../../broker/topic_config.ts';
import { group_config_default, group_config_names } from '../../../broker/queues/group_config.ts';
import type { KafkaHandler } from '../handler.ts';
import { kafka_error_code, error_message } from '../error_map.ts';
import { type Row, rows, versions } from './util.ts';

const RESOURCE_TOPIC = 2;
const RESOURCE_BROKER = 4;
const RESOURCE_GROUP = 32;
const CONFIG_SOURCE_TOPIC = 1;
const CONFIG_SOURCE_DEFAULT = 5;

function configs_of(list: unknown): TopicConfigs {
  const configs: TopicConfigs = {};
  for (const entry of rows(list)) if (entry.value !== null) configs[entry.name as string] = entry.value as string;
  return configs;
}

export const create_topics_handler: KafkaHandler = {
  api: CREATE_TOPICS,
  ...versions(CREATE_TOPICS, 0, 7),
  async handle(request, ctx) {
    const topics = [];
    for (const topic of rows(request.topics)) {
      const name = topic.name as string;
      const partitions = (topic.num_partitions as number) === -1 ? ctx.broker.options.default_partitions : (topic.num_partitions as number);
      const replication = topic.replication_factor as number;
      const row: Row = { name, error_code: 0, error_message: null, num_partitions: partitions, replication_factor: 1, configs: [] };
      try {
        if (rows(topic.assignments).length > 0) throw new BrokerError('invalid_request', 'manual replica assignment is not supported; use sluice topic reassign');
        if (replication === 0 || replication < -1) throw new BrokerError('invalid_replication_factor', `replication factor ${replication} must be positive`);
        const created = await ctx.broker.topics.create(name, partitions, configs_of(topic.configs), { validate_only: Boolean(request.validate_only), replication_factor: replication });
        row.topic_id = created.id;
        row.replication_factor = ctx.broker.partition_info(name, 0).replicas.length || (replication === -1 ? 1 : replication);
        row.configs = config_names().map((config) => ({
          name: config,
          value: created.configs[config] ?? config_default(config),
          read_only: false,
          config_source: created.configs[config] !== undefined ? CONFIG_SOURCE_TOPIC : CONFIG_SOURCE_DEFAULT,
          is_sensitive: false,
        }));
      } catch (error) {
        row.error_code = kafka_error_code(error);
        row.error_message = error_message(error);
        row.num_partitions = -1;
        row.replication_factor = -1;
      }
      topics.push(row);
    }
    return { throttle_time_ms: 0, topics };
  },
};

export const delete_topics_handler: KafkaHandler = {
  api: DELETE_TOPICS,
  ...versions(DELETE_TOPICS, 0, 6),
  async handle(request, ctx) {
    const wanted: Array<{ name: string | null; topic_id: string | null }> =
      ctx.version >= 6
        ? rows(request.topics).map((t) => ({ name: (t.name as string | null) ?? null, topic_id: (t.topic_id as string | null) ?? null }))
        : (request.topic_names as string[]).map((name) => ({ name, topic_id: null }));
    const responses = [];
    for (const entry of wanted) {
      let name = entry.name;
      if (name === null && entry.topic_id) name = ctx.broker.topics.get_by_id(entry.topic_id)?.name ?? null;
      const row: Row = { name, topic_id: entry.topic_id ?? ctx.broker.topics.get(name ?? '')?.id ?? 'AAAAAAAAAAAAAAAAAAAAAA', error_code: 0, error_message: null };
      try {
        if (name === null) throw new BrokerError('unknown_topic_or_partition', `unknown topic id ${entry.topic_id}`);
        if (name.startsWith('__')) throw new BrokerError('invalid_request', `internal topic ${name} cannot be deleted`);
        await ctx.broker.topics.delete(name);
        if (ctx.broker.is_group_coordinator) await ctx.broker.offsets.delete_topic(name);
      } catch (error) {
        row.error_code = kafka_error_code(error);
        row.error_message = error_message(error);
      }
      responses.push(row);
    }
    return { throttle_time_ms: 0, responses };
  },
};

export const create_partitions_handler: KafkaHandler = {
  api: CREATE_PARTITIONS,
  ...versions(CREATE_PARTITIONS, 0, 3),
  async handle(request, ctx) {
    const results = [];
    for (const topic of rows(request.topics)) {
      try {
        if (rows(topic.assignments).length > 0) throw new BrokerError('invalid_request', 'manual replica assignment is not supported on a single node');
        await ctx.broker.topics.add_partitions(topic.name as string, topic.count as number, { validate_only: Boolean(request.validate_only) });
        results.push({ name: topic.name, error_code: 0, error_message: null });
      } catch (error) {
        results.push({ name: topic.name, error_code: kafka_error_code(error), error_message: error_message(error) });
      }
    }
    return { throttle_time_ms: 0, results };
  },
};

export const delete_records_handler: KafkaHandler = {
  api: DELETE_RECORDS,
  ...versions(DELETE_RECORDS, 0, 2),
  async handle(request, ctx) {
    const topics = [];
    for (const topic of rows(request.topics)) {
      const partitions = [];
      for (const partition of rows(topic.partitions)) {
        const row: Row = { partition_index: partition.partition_index, low_watermark: -1, error_code: 0 };
        try {
          const log = ctx.broker.read_log(topic.name as string, partition.partition_index as number);
          const offset = (partition.offset as number) === -1 ? log.high_watermark : (partition.offset as number);
          if (offset > log.high_watermark || offset < 0) {
            row.error_code = ErrorCode.OFFSET_OUT_OF_RANGE;
          } else {
            row.low_watermark = await log.delete_records_before(offset);
          }
        } catch (error) {
          row.error_code = kafka_error_code(error);
        }
        partitions.push(row);
      }
      topics.push({ name: topic.name, partitions });
    }
    return { throttle_time_ms: 0, topics };
  },
};

/** Kafka's config source for a group config (DescribeConfigs). */
const CONFIG_SOURCE_GROUP = 8;

function config_row(name: string, value: string, set: boolean, source_when_set: number): Row {
  return {
    name,
    value,
    read_only: false,
    is_default: !set,
    config_source: set ? source_when_set : CONFIG_SOURCE_DEFAULT,
    is_sensitive: false,
    synonyms: [],
    config_type: 0,
    documentation: null,
  };
}

export const describe_configs_handler: KafkaHandler = {
  api: DESCRIBE_CONFIGS,
  ...versions(DESCRIBE_CONFIGS, 0, 4),
  handle(request, ctx) {
    const results = rows(request.resources).map((resource) => {
      const base = { resource_type: resource.resource_type, resource_name: resource.resource_name, error_code: 0, error_message: null, configs: [] as Row[] };
      const keys = resource.configuration_keys as string[] | null;
      if (resource.resource_type === RESOURCE_BROKER) return base;
      if (resource.resource_type === RESOURCE_GROUP) {
        const group = resource.resource_name as string;
        const set = ctx.broker.group_configs(group);
        base.configs = group_config_names()
          .filter((name) => keys === null || keys.length === 0 || keys.includes(name))
          .map((name) => config_row(name, set[name] ?? group_config_default(name, ctx.broker.shares.settings) ?? '', set[name] !== undefined, CONFIG_SOURCE_GROUP));
        return base;
      }
      if (resource.resource_type !== RESOURCE_TOPIC) return { ...base, error_code: ErrorCode.INVALID_REQUEST, error_message: 'only topic, group and broker resources are supported' };
      const topic = ctx.broker.topics.get(resource.resource_name as string);
      if (!topic) return { ...base, error_code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, error_message: `unknown topic ${String(resource.resource_name)}` };
      base.configs = config_names()
        .filter((name) => keys === null || keys.length === 0 || keys.includes(name))
        .map((name) => config_row(name, topic.configs[name] ?? config_default(name) ?? '', topic.configs[name] !== undefined, CONFIG_SOURCE_TOPIC));
      return base;
    });
    return { throttle_time_ms: 0, results };
  },
};

async function alter(ctx: Parameters<KafkaHandler['handle']>[1], resource: Row, work: (name: string, kind: 'topic' | 'group') => Promise<void>): Promise<Row> {
  const base = { resource_type: resource.resource_type, resource_name: resource.resource_name, error_code: 0, error_message: null as string | null };
  if (resource.resource_type !== RESOURCE_TOPIC && resource.resource_type !== RESOURCE_GROUP) return { ...base, error_code: ErrorCode.INVALID_REQUEST, error_message: 'only topic and group configs can be altered' };
  try {
    await work(resource.resource_name as string, resource.resource_type === RESOURCE_GROUP ? 'group' : 'topic');
  } catch (error) {
    return { ...base, error_code: kafka_error_code(error), error_message: error_message(error) };
  }
  void ctx;
  return base;
}

export const alter_configs_handler: KafkaHandler = {
  api: ALTER_CONFIGS,
  ...versions(ALTER_CONFIGS, 0, 2),
  async handle(request, ctx) {
    const responses = [];
    for (const resource of rows(request.resources)) {
      responses.push(
        await alter(ctx, resource, (name, kind) =>
          kind === 'group'
            ? ctx.broker.set_group_configs(name, configs_of(resource.configs), { replace: true, validate_only: Boolean(request.validate_only) })
            : ctx.broker.topics.set_configs(name, configs_of(resource.configs), { validate_only: Boolean(request.validate_only) }),
        ),
      );
    }
    return { throttle_time_ms: 0, responses };
  },
};

export const incremental_alter_configs_handler: KafkaHandler = {
  api: INCREMENTAL_ALTER_CONFIGS,
  ...versions(INCREMENTAL_ALTER_CONFIGS, 0, 1),
  async handle(request, ctx) {
    const responses = [];
    for (const resource of rows(request.resources)) {
      responses.push(
        await alter(ctx, resource, async (name, kind) => {
          const set: TopicConfigs = {};
          const remove: string[] = [];
          for (const config of rows(resource.configs)) {
            const operation = config.config_operation as number;
            if (operation === 0) set[config.name as string] = config.value as string;
            else if (operation === 1) remove.push(config.name as string);
            else throw new BrokerError('invalid_config', `config operation ${operation} (APPEND/SUBTRACT) applies to list configs only; none are supported`);
          }
          if (kind === 'group') await ctx.broker.set_group_configs(name, set, { remove, validate_only: Boolean(request.validate_only) });
          else await ctx.broker.topics.set_configs(name, set, { merge: true, remove, validate_only: Boolean(request.validate_only) });
        }),
      );
    }
    return { throttle_time_ms: 0, responses };
  },
};

export const init_producer_id_handler: KafkaHandler = {
  api: INIT_PRODUCER_ID,
  ...versions(INIT_PRODUCER_ID, 0, 4),
  async handle(request, ctx) {
    if (request.transactional_id !== null) {
      return { throttle_time_ms: 0, error_code: ErrorCode.INVALID_REQUEST, producer_id: -1, producer_epoch: -1 };
    }
    const given = (request.producer_id as number | undefined) ?? -1;
    if (given >= 0) {
      // An idempotent producer bumping its epoch after an error keeps its id.
      const epoch = ((request.producer_epoch as number) + 1) & 0x7fff;
      return { throttle_time_ms: 0, error_code: 0, producer_id: given, producer_epoch: epoch };
    }
    return { throttle_time_ms: 0, error_code: 0, producer_id: await ctx.broker.allocate_producer_id(), producer_epoch: 0 };
  },
};

export const offset_for_leader_epoch_handler: KafkaHandler = {
  api: OFFSET_FOR_LEADER_EPOCH,
  ...versions(OFFSET_FOR_LEADER_EPOCH, 0, 4),
  handle(request, ctx) {
    return {
      throttle_time_ms: 0,
      topics: rows(request.topics).map((topic) => ({
        topic: topic.topic,
        partitions: rows(topic.partitions).map((partition) => {
          const row: Row = { error_code: 0, partition: partition.partition, leader_epoch: -1, end_offset: -1 };
          try {
            const end = ctx.broker.end_offset_for_epoch(
              topic.topic as string,
              partition.partition as number,
              partition.leader_epoch as number,
              (partition.current_leader_epoch as number | undefined) ?? -1,
            );
            row.leader_epoch = end.epoch;
            row.end_offset = end.end_offset;
          } catch (error) {
            row.error_code = kafka_error_code(error);
          }
          return row;
        }),
      })),
    };
  },
};

export const describe_cluster_handler: KafkaHandler = {
  api: DESCRIBE_CLUSTER,
  ...versions(DESCRIBE_CLUSTER, 0, 1),
  handle(_request, ctx) {
    return {
      throttle_time_ms: 0,
      error_code: 0,
      error_message: null,
      endpoint_type: 1,
      cluster_id: ctx.broker.cluster_id,
      controller_id: ctx.broker.controller_id,
      brokers: ctx.broker
        .brokers({ host: ctx.listener.advertised_host, port: ctx.listener.advertised_port })
        .map((b) => ({ broker_id: b.node_id, host: b.host, port: b.port, rack: null })),
      cluster_authorized_operations: -2147483648,
    };
  },
};

export const alter_partition_reassignments_handler: KafkaHandler = {
  api: ALTER_PARTITION_REASSIGNMENTS,
  ...versions(ALTER_PARTITION_REASSIGNMENTS, 0, 0),
  async handle(request, ctx) {
    const responses = [];
    for (const topic of rows(request.topics)) {
      const partitions = [];
      for (const partition of rows(topic.partitions)) {
        const row: Row = { partition_index: partition.partition_index, error_code: 0, error_message: null };
        try {
          // Null replicas cancel the reassignment in progress.
          await ctx.broker.reassign_partition(topic.name as string, partition.partition_index as number, partition.replicas as number[] | null);
        } catch (error) {
          row.error_code = kafka_error_code(error);
          row.error_message = error_message(error);
        }
        partitions.push(row);
      }
      responses.push({ name: topic.name, partitions });
    }
    return { throttle_time_ms: 0, error_code: 0, error_message: null, responses };
  },
};

export const list_partition_reassignments_handler: KafkaHandler = {
  api: LIST_PARTITION_REASSIGNMENTS,
  ...versions(LIST_PARTITION_REASSIGNMENTS, 0, 0),
  async handle(request, ctx) {
    // Null topics ask for every partition; unknown topics and partitions are left out, as Kafka does.
    const asked: Array<{ name: string; partitions: number[] | null }> =
      request.topics === null ? ctx.broker.topics.list().map((topic) => ({ name: topic.name, partitions: null })) : rows(request.topics).map((topic) => ({ name: topic.name as string, partitions: topic.partition_indexes as number[] }));
    const topics = [];
    for (const { name, partitions: indexes } of asked) {
      const topic = ctx.broker.topics.get(name);
      if (!topic) continue;
      const partitions = [];
      for (const p of indexes ?? Array.from({ length: topic.partitions }, (_, i) => i)) {
        if (p < 0 || p >= topic.partitions) continue;
        const moving = ctx.broker.partition_reassignment(name, p);
        if (moving) partitions.push({ partition_index: p, replicas: moving.replicas, adding_replicas: moving.adding, removing_replicas: moving.removing });
      }
      if (partitions.length > 0) topics.push({ name, partitions });
    }
    return { throttle_time_ms: 0, error_code: 0, error_message: null, topics };
  },
};
