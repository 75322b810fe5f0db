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

export class LocalMetadataStore {
  private readonly file: string;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    data_dir: string,
    private readonly io: FileIO = new NodeFileIO(),
  ) {
    this.file = path.join(data_dir, FILE_NAME);
  }

  async load(): Promise<MetadataState> {
    const bytes = await read_whole_file(this.io, this.file);
    if (bytes === null) return { version: 1, cluster_id: new_uuid(), topics: [], producer_id_block_end: 0 };
    const state = JSON.parse(bytes.toString('utf8')) as MetadataState;
    if (state.version !== 1) throw new Error(`${this.file}: unknown metadata version ${String(state.version)}`);
    return state;
  }

  /** Saves a snapshot; saves are serialised so the newest state lands last. */
  save(state: MetadataState): Promise<void> {
    const content = Buffer.from(`${JSON.stringify(state, null, 1)}\n`, 'utf8');
    const next = this.chain.then(() => replace_file_atomically(this.io, this.file, content));
    this.chain = next.catch(() => undefined);
    return next;
  }
}
