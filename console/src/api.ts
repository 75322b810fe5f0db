// The broker's admin API (/api/v1) as the console uses it: typed responses, and one error type
// for HTTP errors, network failures and answers that are not JSON, so every page reports
// failures the same way.

const BASE = '/api/v1';

/** Binary keys and values arrive base64-encoded; text arrives as a string. */
export type Payload = string | { base64: string } | null;

export interface ClusterInfo {
  cluster_id: string;
  node_id: number;
  brokers: Array<{ node_id: number; host: string; port: number }>;
  controller: number;
}

export interface TopicSummary {
  name: string;
  id: string;
  partitions: number;
  internal: boolean;
  messages: number;
  bytes: number;
}

export interface Page<T> {
  items: T[];
  total: number;
  offset: number;
  limit: number;
}

export interface PartitionInfo {
  partition: number;
  leader: number;
  replicas: number[];
  isr: number[];
  log_start_offset: number;
  high_watermark: number;
  log_end_offset: number;
  bytes: number;
}

export interface TopicDetail {
  name: string;
  id: string;
  internal: boolean;
  configs: Record<string, unknown>;
  partitions: PartitionInfo[];
}

export type Headers = Record<string, Payload> | Array<{ key: string; value: Payload }>;

export interface Message {
  offset: number;
  timestamp_ms: number;
  key: Payload;
  value: Payload;
  headers: Headers | null;
  partition?: number;
  /** Size of the whole value; the API cuts very long fields. */
  value_bytes?: number | null;
  truncated?: true;
}

export interface MessagePage<M = Message> {
  items: M[];
  next_offset: number;
  high_watermark: number;
  log_start_offset?: number;
  partition?: number;
}

/** A dead letter: the message, and where it came from and why (from the broker's headers). */
export interface DeadLetterMessage extends Message {
  origin_topic: string | null;
  origin_partition: number | null;
  origin_offset: number | null;
  group: string | null;
  delivery_count: number | null;
  reason: string | null;
  dead_lettered_at_ms: number | null;
}

export interface GroupSummary {
  group_id: string;
  state: string;
  members: number;
  lag: number;
}

export interface GroupOffset {
  topic: string;
  partition: number;
  /** Null for an assigned partition the group has not committed yet. */
  committed: number | null;
  high_watermark: number;
  lag: number | null;
}

export interface GroupMember {
  member_id: string;
  group_instance_id?: string | null;
  client_id: string;
  host: string;
  assignments: Array<{ topic: string; partitions: number[] }>;
}

export interface GroupDetail {
  group_id: string;
  state: string;
  protocol: string;
  members: GroupMember[];
  offsets: GroupOffset[];
  lag: number;
}

export interface QueueSummary {
  group_id: string;
  topics: string[];
  members?: number;
  in_flight: number;
  available: number;
  redeliveries: number;
  dead_lettered: number;
  expired: number;
}

/** An AMQP queue (`/amqp/queues`): its topic and share group; depths null off the coordinator. */
export interface AmqpQueue {
  vhost: string;
  name: string;
  topic: string;
  group: string;
  durable: boolean;
  arguments: Record<string, unknown>;
  ready: number | null;
  unacked: number | null;
  consumers: number | null;
}

export interface AmqpBinding {
  vhost: string;
  source: string;
  destination: string;
  destination_type: 'queue' | 'exchange';
  routing_key: string;
}

export interface QueueDetail extends Omit<QueueSummary, 'members'> {
  members: Array<Record<string, unknown>>;
  settings: Record<string, unknown>;
  partitions: Array<Record<string, unknown>>;
}

export interface DeadLetterTopic {
  topic: string;
  /** Null when a group's configured dead-letter topic does not name its origin. */
  origin_topic: string | null;
  group: string;
  partitions?: number;
  messages: number;
}

export interface RedriveOutcome {
  redriven: number;
  selected?: number;
  /** Letters left alone because they were redriven before (by the console or `sluice dlq`). */
  skipped_already_redriven?: number;
}

export interface Stats {
  now_ms: number;
  messages_in_total: number;
  bytes_in_total: number;
  messages_out_total: number;
  bytes_out_total: number;
  connections: number;
  topics?: number;
  partitions?: number;
  uptime_ms?: number;
}

export interface DelayedStats {
  pending: number;
  scheduled_total: number;
  delivered_total: number;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly path: string,
  ) {
    super(message);
  }
}

async function request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  let response: Response;
  try {
    response = await fetch(BASE + path, {
      method,
      signal,
      headers:
        body === undefined
          ? { accept: 'application/json' }
          : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ApiError(0, 'network', `the broker did not answer (${(error as Error).message})`, path);
  }
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    // A proxy's error page or a truncated answer: reported below with the status.
  }
  if (!response.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new ApiError(
      response.status,
      error?.code ?? `http_${response.status}`,
      error?.message ?? (response.statusText || 'request failed'),
      path,
    );
  }
  if (parsed === undefined) throw new ApiError(response.status, 'bad_response', 'the answer is not JSON', path);
  return parsed as T;
}

const q = (params: Record<string, string | number | boolean | undefined>) => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
};
const seg = encodeURIComponent;

export const api = {
  get: <T>(path: string, signal?: AbortSignal) => request<T>('GET', path, undefined, signal),
  cluster: (signal?: AbortSignal) => request<ClusterInfo>('GET', '/cluster', undefined, signal),
  stats: (signal?: AbortSignal) => request<Stats>('GET', '/stats', undefined, signal),
  topics: (offset: number, limit: number, internal: boolean, signal?: AbortSignal) =>
    request<Page<TopicSummary>>('GET', `/topics${q({ offset, limit, internal })}`, undefined, signal),
  topic: (name: string, signal?: AbortSignal) => request<TopicDetail>('GET', `/topics/${seg(name)}`, undefined, signal),
  create_topic: (name: string, partitions: number) => request<unknown>('POST', '/topics', { name, partitions }),
  messages: (topic: string, partition: number, offset: number, limit: number, signal?: AbortSignal) =>
    request<MessagePage>(
      'GET',
      `/topics/${seg(topic)}/partitions/${partition}/messages${q({ offset, limit })}`,
      undefined,
      signal,
    ),
  groups: (offset: number, limit: number, signal?: AbortSignal) =>
    request<Page<GroupSummary>>('GET', `/groups${q({ offset, limit })}`, undefined, signal),
  group: (id: string, signal?: AbortSignal) => request<GroupDetail>('GET', `/groups/${seg(id)}`, undefined, signal),
  queues: (offset: number, limit: number, signal?: AbortSignal) =>
    request<Page<QueueSummary>>('GET', `/queues${q({ offset, limit })}`, undefined, signal),
  amqp_queues: (signal?: AbortSignal) =>
    request<{ queues: AmqpQueue[] }>('GET', '/amqp/queues', undefined, signal).then((r) => r.queues),
  amqp_bindings: (signal?: AbortSignal) =>
    request<{ bindings: AmqpBinding[] }>('GET', '/amqp/bindings', undefined, signal).then((r) => r.bindings),
  queue: (group: string, signal?: AbortSignal) =>
    request<QueueDetail>('GET', `/queues/${seg(group)}`, undefined, signal),
  dead_letters: (offset: number, limit: number, signal?: AbortSignal) =>
    request<Page<DeadLetterTopic>>('GET', `/dead-letters${q({ offset, limit })}`, undefined, signal),
  /** Without an offset, the newest page. */
  dead_letter_messages: (
    topic: string,
    partition: number,
    offset: number | undefined,
    limit: number,
    signal?: AbortSignal,
  ) =>
    request<MessagePage<DeadLetterMessage>>(
      'GET',
      `/dead-letters/${seg(topic)}/messages${q({ partition, offset, limit })}`,
      undefined,
      signal,
    ),
  redrive: (topic: string, selection: { offsets: Array<{ partition: number; offset: number }> } | { all: true }) =>
    request<RedriveOutcome>('POST', `/dead-letters/${seg(topic)}/redrive`, selection),
  delayed: (signal?: AbortSignal) => request<DelayedStats>('GET', '/delayed', undefined, signal),
};
