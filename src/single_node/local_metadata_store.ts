// The single-node metadata store: topics (name, id, partition count, configs), the cluster id,
// share-group configs, the producer-id allocator, AMQP routing definitions, ACL bindings and managed
// users' SCRAM credentials and client quotas, kept in one JSON file in the data directory (broker-metadata.json) and
// replaced atomically. Records are replaced,
// never changed in place, so a reader holding one sees it as it was.
import path from 'node:path';
import { type FileIO, read_whole_file, replace_file_atomically } from '../storage/index.ts';
import { new_uuid, type MetadataStore, type StoredScram, type StoredScramUser } from '../core/metadata_store.ts';
import type { GroupConfigs, RoutingDefinitions, TopicRecord } from '../core/types.ts';
import { binding_key, type AclBinding } from '../core/acls.ts';
import { quota_entity_key, type ClientQuota, type QuotaEntity, type QuotaValues } from '../core/quotas.ts';

export interface MetadataState {
  version: 1;
  cluster_id: string;
  topics: TopicRecord[];
  /** Producer ids below this may have been handed out. */
  producer_id_block_end: number;
  /** Share-group configs by group id (absent in files written before they existed). */
  group_configs?: Record<string, GroupConfigs>;
  /** AMQP routing definitions by virtual host (absent in files written before they existed). */
  routing?: Record<string, RoutingDefinitions>;
  /** ACL bindings (absent in files written before they existed). */
  acls?: AclBinding[];
  /** SCRAM credentials of managed users (absent in files written before they existed). */
  scram_users?: Record<string, StoredScramUser>;
  /** Client quotas, one entry per entity (absent in files written before they existed). */
  client_quotas?: ClientQuota[];
  /** Dynamic broker configs by scope (absent in files written before they existed). */
  broker_configs?: Record<string, Record<string, string>>;
}

const NO_ACLS: readonly AclBinding[] = [];
const NO_QUOTAS: readonly ClientQuota[] = [];
const NO_BROKER_CONFIGS: Readonly<Record<string, Record<string, string>>> = {};

const FILE_NAME = 'broker-metadata.json';

export class LocalMetadataStore implements MetadataStore {
  private chain: Promise<void> = Promise.resolve();

  private constructor(
    private readonly io: FileIO,
    private readonly file: string,
    private state: MetadataState,
  ) {}

  /** Reads the file (a new state when there is none) and writes it back, so the cluster id is kept. */
  static async open(io: FileIO, data_dir: string): Promise<LocalMetadataStore> {
    const file = path.join(data_dir, FILE_NAME);
    const bytes = await read_whole_file(io, file);
    let state: MetadataState;
    if (bytes === null) state = { version: 1, cluster_id: new_uuid(), topics: [], producer_id_block_end: 0 };
    else state = JSON.parse(bytes.toString('utf8')) as MetadataState;
    if (state.version !== 1) throw new Error(`${file}: unknown metadata version ${String(state.version)}`);
    const store = new LocalMetadataStore(io, file, state);
    await store.save();
    return store;
  }

  get cluster_id(): string {
    return this.state.cluster_id;
  }

  topics(): readonly TopicRecord[] {
    return this.state.topics;
  }

  topic(name: string): TopicRecord | undefined {
    return this.state.topics.find((t) => t.name === name);
  }

  create_topic(record: TopicRecord): Promise<void> {
    this.state.topics = [...this.state.topics, record];
    return this.save();
  }

  delete_topic(name: string): Promise<void> {
    this.state.topics = this.state.topics.filter((t) => t.name !== name);
    return this.save();
  }

  update_topic(name: string, change: (record: TopicRecord) => TopicRecord): Promise<void> {
    this.state.topics = this.state.topics.map((t) => (t.name === name ? { ...change(t) } : t));
    return this.save();
  }

  group_configs(group_id: string): GroupConfigs {
    return { ...this.state.group_configs?.[group_id] };
  }

  set_group_configs(group_id: string, configs: GroupConfigs): Promise<void> {
    const all = { ...this.state.group_configs, [group_id]: configs };
    if (Object.keys(configs).length === 0) delete all[group_id];
    this.state.group_configs = all;
    return this.save();
  }

  routing_vhosts(): string[] {
    return Object.keys(this.state.routing ?? {});
  }

  routing_definitions(vhost: string): RoutingDefinitions | undefined {
    return this.state.routing?.[vhost];
  }

  set_routing_definitions(vhost: string, definitions: RoutingDefinitions): Promise<void> {
    this.state.routing = { ...this.state.routing, [vhost]: definitions };
    return this.save();
  }

  private scram_view: ReadonlyMap<string, StoredScramUser> | null = null;

  scram_users(): ReadonlyMap<string, StoredScramUser> {
    this.scram_view ??= new Map(Object.entries(this.state.scram_users ?? {}));
    return this.scram_view;
  }

  set_scram(user: string, hash: 'sha256' | 'sha512', credential: StoredScram | null): Promise<void> {
    const users = { ...this.state.scram_users };
    const next: StoredScramUser = { ...users[user] };
    if (credential) next[hash] = credential;
    else delete next[hash];
    if (Object.keys(next).length === 0) delete users[user];
    else users[user] = next;
    this.state.scram_users = users;
    this.scram_view = null;
    return this.save();
  }

  acls(): readonly AclBinding[] {
    return this.state.acls ?? NO_ACLS;
  }

  change_acls(added: readonly AclBinding[], removed: readonly AclBinding[]): Promise<void> {
    const gone = new Set(removed.map(binding_key));
    const kept = this.acls().filter((binding) => !gone.has(binding_key(binding)));
    const known = new Set(kept.map(binding_key));
    const fresh = added.filter((binding) => !known.has(binding_key(binding)) && known.add(binding_key(binding)));
    this.state.acls = [...kept, ...fresh];
    return this.save();
  }

  client_quotas(): readonly ClientQuota[] {
    return this.state.client_quotas ?? NO_QUOTAS;
  }

  set_client_quota(entity: QuotaEntity, values: QuotaValues | null): Promise<void> {
    const key = quota_entity_key(entity);
    const others = this.client_quotas().filter((quota) => quota_entity_key(quota.entity) !== key);
    this.state.client_quotas = values ? [...others, { entity, values }] : others;
    return this.save();
  }

  broker_configs(): Readonly<Record<string, Readonly<Record<string, string>>>> {
    return this.state.broker_configs ?? NO_BROKER_CONFIGS;
  }

  set_broker_configs(scope: string, configs: Readonly<Record<string, string>>): Promise<void> {
    const all = { ...this.state.broker_configs, [scope]: { ...configs } };
    if (Object.keys(configs).length === 0) delete all[scope];
    this.state.broker_configs = all;
    return this.save();
  }

  async allocate_producer_ids(count: number): Promise<number> {
    const start = this.state.producer_id_block_end;
    this.state.producer_id_block_end = start + count;
    await this.save();
    return start;
  }

  /** Saves a snapshot; saves are serialised so the newest state lands last. */
  private save(): Promise<void> {
    const content = Buffer.from(`${JSON.stringify(this.state, null, 1)}\n`, 'utf8');
    const next = this.chain.then(() => replace_file_atomically(this.io, this.file, content));
    this.chain = next.catch(() => undefined);
    return next;
  }
}
