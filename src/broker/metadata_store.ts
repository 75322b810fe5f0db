// The single-node metadata store: topics (name, id, partition count, configs), the cluster id and
// the producer-id allocator, kept in one JSON file in the data directory and replaced atomically.
// A cluster will put the same records in etcd behind the same interface.
import path from 'node:path';
import crypto from 'node:crypto';
import { NodeFileIO, type FileIO } from '../storage/index.ts';
import { read_whole_file, replace_file_atomically } from '../storage/file_util.ts';
import type { TopicConfigs } from './topic_config.ts';

export interface TopicRecord {
  name: string;
  /** Kafka topic id: 16 random bytes, base64url as Kafka prints them. */
  id: string;
  partitions: number;
  configs: TopicConfigs;
  created_ms: number;
}

export interface MetadataState {
  version: 1;
  cluster_id: string;
  topics: TopicRecord[];
  /** Producer ids below this may have been handed out. */
  producer_id_block_end: number;
  /** Share-group configs by group id (absent in files written before they existed). */
  group_configs?: Record<string, Record<string, string>>;
}

const FILE_NAME = 'broker-metadata.json';

export function new_uuid(): string {
  let bytes = crypto.randomBytes(16);
  while (bytes.every((b) => b === 0)) bytes = crypto.randomBytes(16);
  return bytes.toString('base64url');
}

/**
 * Where topics, share-group configs and producer-id blocks are recorded: one JSON file for a single
 * node (LocalMetadataStore), etcd for a cluster (cluster/etcd_metadata_store.ts). A cluster store's
 * changes reach the broker through its view of the cluster, not through these calls' results.
 */
export interface MetadataStore {
  readonly distributed: boolean;
  create_topic(record: TopicRecord, replication_factor: number): Promise<void>;
  delete_topic(name: string): Promise<void>;
  /** Applies `change` to the stored record (configs, partition count). */
  update_topic(name: string, change: (record: TopicRecord) => TopicRecord): Promise<void>;
  set_group_configs(group_id: string, configs: Record<string, string>): Promise<void>;
  /** Reserves `count` producer ids; returns the first. */
  allocate_producer_ids(count: number): Promise<number>;
}

export class LocalMetadataStore implements MetadataStore {
  readonly distributed = false;
  private state: MetadataState | null = null;
  private readonly file: string;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    data_dir: string,
    private readonly io: FileIO = new NodeFileIO(),
  ) {
    this.file = path.join(data_dir, FILE_NAME);
  }

  /** Reads the file once; the returned state is the one this store changes and saves. */
  async load(): Promise<MetadataState> {
    const bytes = await read_whole_file(this.io, this.file);
    let state: MetadataState;
    if (bytes === null) state = { version: 1, cluster_id: new_uuid(), topics: [], producer_id_block_end: 0 };
    else state = JSON.parse(bytes.toString('utf8')) as MetadataState;
    if (state.version !== 1) throw new Error(`${this.file}: unknown metadata version ${String(state.version)}`);
    this.state = state;
    return state;
  }

  private get loaded(): MetadataState {
    if (!this.state) throw new Error('metadata store used before load()');
    return this.state;
  }

  create_topic(record: TopicRecord): Promise<void> {
    this.loaded.topics.push(record);
    return this.save(this.loaded);
  }

  delete_topic(name: string): Promise<void> {
    this.loaded.topics = this.loaded.topics.filter((t) => t.name !== name);
    return this.save(this.loaded);
  }

  update_topic(name: string, change: (record: TopicRecord) => TopicRecord): Promise<void> {
    const state = this.loaded;
    // In place: the topic manager indexes these same objects.
    for (const topic of state.topics) if (topic.name === name) Object.assign(topic, change(topic));
    return this.save(state);
  }

  set_group_configs(group_id: string, configs: Record<string, string>): Promise<void> {
    const state = this.loaded;
    state.group_configs = { ...state.group_configs, [group_id]: configs };
    if (Object.keys(configs).length === 0) delete state.group_configs[group_id];
    return this.save(state);
  }

  async allocate_producer_ids(count: number): Promise<number> {
    const state = this.loaded;
    const start = state.producer_id_block_end;
    state.producer_id_block_end = start + count;
    await this.save(state);
    return start;
  }

  /** Saves a snapshot; saves are serialised so the newest state lands last. */
  save(state: MetadataState): Promise<void> {
    const content = Buffer.from(`${JSON.stringify(state, null, 1)}\n`, 'utf8');
    const next = this.chain.then(() => replace_file_atomically(this.io, this.file, content));
    this.chain = next.catch(() => undefined);
    return next;
  }
}
