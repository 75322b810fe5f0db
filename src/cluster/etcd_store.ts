// The cluster's metadata in etcd. Layout under the cluster prefix (default `/sluice/default/`):
//   cluster_id                  the cluster id, written once
//   brokers/<id>                a live broker's address, bound to its lease
//   controller                  the controller's node id, bound to its lease; the key's create
//                               revision is the controller epoch
//   topics/<name>               topic record with its replica assignment
//   partitions/<name>/<p>       leader, leader epoch, ISR, replicas
//   producer_ids                end of the last producer-id block handed out
//   group_configs/<group>       share-group configs
//   routing/<vhost>             AMQP exchanges, queues and bindings of a virtual host (URI-encoded)
//   users/<user>/<hash>         a managed user's SCRAM credential (sha256 or sha512; the user
//                               URI-encoded): salt, iterations and keys, never a password
//   acls/<sha-256>              one ACL binding, keyed by the hash of its fields (so adding one
//                               twice keeps one, and no change reads what another writes)
//   quotas/<sha-256>            the client quotas of one entity (user, client id or both), keyed
//                               by the hash of the entity
// Every change is a transaction comparing a revision (or the controller epoch), so a writer acting
// on a stale view fails instead of overwriting a newer decision.
import { Etcd3, type Namespace, noop_policy } from './etcd_client.ts';
import {
  type BrokerRegistration,
  type ClusterTopic,
  type ClusterView,
  type PartitionState,
  empty_view,
  partition_key,
} from './model.ts';
import type { RoutingDefinitions } from '../core/types.ts';
import { binding_key, type AclBinding } from '../core/acls.ts';
import { quota_entity_key, type ClientQuota, type QuotaEntity, type QuotaValues } from '../core/quotas.ts';
import type { StoredScram } from '../core/metadata_store.ts';
import crypto from 'node:crypto';

const ETCD_CALL_TIMEOUT_MS = 5_000;
const ETCD_DIAL_TIMEOUT_MS = 3_000;

export class EtcdUnavailableError extends Error {
  constructor(endpoints: string[], cause: unknown) {
    super(`etcd at ${endpoints.join(',')} is not reachable: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'EtcdUnavailableError';
  }
}

export class EtcdStore {
  readonly client: Etcd3;
  readonly ns: Namespace;

  constructor(
    readonly endpoints: string[],
    readonly prefix: string,
  ) {
    this.client = new Etcd3({
      hosts: endpoints,
      dialTimeout: ETCD_DIAL_TIMEOUT_MS,
      // Our own loops retry; the client's circuit breaker would refuse calls for seconds after etcd returns.
      faultHandling: { host: () => noop_policy, global: noop_policy },
      defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + ETCD_CALL_TIMEOUT_MS }),
    });
    this.ns = this.client.namespace(prefix);
  }

  close(): void {
    this.client.close();
  }

  /** Fails with a message naming the endpoints when etcd does not answer. */
  async check_reachable(): Promise<void> {
    try {
      await this.ns.get('cluster_id').string();
    } catch (error) {
      throw new EtcdUnavailableError(this.endpoints, error);
    }
  }

  async ensure_cluster_id(candidate: string): Promise<string> {
    await this.ns.if('cluster_id', 'Create', '==', 0).then(this.ns.put('cluster_id').value(candidate)).commit();
    return (await this.ns.get('cluster_id').string()) ?? candidate;
  }

  /** Reads every key under the prefix into a view, at one revision. */
  async read_view(): Promise<ClusterView> {
    const response = await this.ns.getAll().exec();
    const view = empty_view();
    view.revision = response.header.revision;
    for (const kv of response.kvs) {
      // The namespace strips its prefix from returned keys.
      const raw = kv.key.toString('utf8');
      const key = raw.startsWith(this.prefix) ? raw.slice(this.prefix.length) : raw;
      const text = kv.value.toString('utf8');
      const versioned = <T>(value: T) => ({ value, mod_revision: kv.mod_revision });
      if (key === 'cluster_id') view.cluster_id = text;
      else if (key === 'controller')
        view.controller = { node_id: (JSON.parse(text) as { node_id: number }).node_id, epoch: kv.create_revision };
      else if (key === 'producer_ids') view.producer_id_block_end = versioned(Number(text));
      else if (key.startsWith('brokers/')) {
        const broker = JSON.parse(text) as BrokerRegistration;
        view.brokers.set(broker.node_id, broker);
      } else if (key.startsWith('topics/')) {
        const topic = JSON.parse(text) as ClusterTopic;
        view.topics.set(topic.name, versioned(topic));
      } else if (key.startsWith('partitions/')) {
        const rest = key.slice('partitions/'.length);
        const slash = rest.lastIndexOf('/');
        view.partitions.set(
          partition_key(rest.slice(0, slash), Number(rest.slice(slash + 1))),
          versioned(JSON.parse(text) as PartitionState),
        );
      } else if (key.startsWith('group_configs/')) {
        view.group_configs.set(key.slice('group_configs/'.length), JSON.parse(text) as Record<string, string>);
      } else if (key.startsWith('routing/')) {
        view.routing.set(decodeURIComponent(key.slice('routing/'.length)), JSON.parse(text) as RoutingDefinitions);
      } else if (key.startsWith('acls/')) {
        view.acls.push(JSON.parse(text) as AclBinding);
      } else if (key.startsWith('quotas/')) {
        view.client_quotas.push(JSON.parse(text) as ClientQuota);
      } else if (key.startsWith('broker_configs/')) {
        view.broker_configs[key.slice('broker_configs/'.length)] = JSON.parse(text) as Record<string, string>;
      } else if (key.startsWith('users/')) {
        const [user, hash] = key.slice('users/'.length).split('/') as [string, 'sha256' | 'sha512'];
        const name = decodeURIComponent(user);
        view.scram_users.set(name, { ...view.scram_users.get(name), [hash]: JSON.parse(text) as StoredScram });
      }
    }
    return view;
  }

  /** Calls `on_change` after any change under the prefix (and when the watch reconnects). */
  async watch(on_change: () => void): Promise<() => Promise<void>> {
    const watcher = await this.ns.watch().prefix('').create();
    watcher.on('data', () => on_change());
    watcher.on('connected', () => on_change());
    watcher.on('error', () => undefined);
    return () => watcher.cancel();
  }

  // ---------------------------------------------------------------- brokers and the controller

  /** Registers a broker under `lease_id`; false when the id is already registered. */
  async register_broker(registration: BrokerRegistration, lease_id: string): Promise<boolean> {
    const key = `brokers/${registration.node_id}`;
    const result = await this.ns
      .if(key, 'Create', '==', 0)
      .then(this.ns.put(key).value(JSON.stringify(registration)).lease(lease_id))
      .commit();
    return result.succeeded;
  }

  async registered_broker(node_id: number): Promise<BrokerRegistration | null> {
    const text = await this.ns.get(`brokers/${node_id}`).string();
    return text === null ? null : (JSON.parse(text) as BrokerRegistration);
  }

  /** A broker's registration and the lease it is held by, or null when it is not registered. */
  async broker_lease(node_id: number): Promise<{ registration: BrokerRegistration; lease_id: string } | null> {
    const kv = (await this.ns.get(`brokers/${node_id}`).exec()).kvs[0];
    if (!kv) return null;
    return { registration: JSON.parse(kv.value.toString('utf8')) as BrokerRegistration, lease_id: kv.lease };
  }

  /** Ends a lease now: etcd deletes the keys it holds. */
  async revoke_lease(lease_id: string): Promise<void> {
    await this.client.leaseClient.leaseRevoke({ ID: lease_id });
  }

  /** Becomes controller when there is none; returns the controller epoch, or null. */
  async campaign(node_id: number, lease_id: string): Promise<string | null> {
    const result = await this.ns
      .if('controller', 'Create', '==', 0)
      .then(this.ns.put('controller').value(JSON.stringify({ node_id })).lease(lease_id))
      .commit();
    if (!result.succeeded) return null;
    return result.header.revision;
  }

  // ---------------------------------------------------------------- topics and partitions

  /** Creates a topic and its partitions' initial states at once; false when the name is taken. */
  async create_topic(topic: ClusterTopic, states: PartitionState[]): Promise<boolean> {
    const key = `topics/${topic.name}`;
    const puts = [this.ns.put(key).value(JSON.stringify(topic))];
    states.forEach((state, p) => puts.push(this.ns.put(`partitions/${topic.name}/${p}`).value(JSON.stringify(state))));
    const result = await this.ns
      .if(key, 'Create', '==', 0)
      .then(...puts)
      .commit();
    return result.succeeded;
  }

  async delete_topic(name: string): Promise<void> {
    await this.ns.delete().key(`topics/${name}`);
    await this.ns.delete().prefix(`partitions/${name}/`);
  }

  /** Replaces a topic record (configs, added partitions) if unchanged since `mod_revision`. */
  async update_topic(
    topic: ClusterTopic,
    mod_revision: string,
    new_states: Array<[number, PartitionState]> = [],
  ): Promise<boolean> {
    const key = `topics/${topic.name}`;
    const puts = [this.ns.put(key).value(JSON.stringify(topic))];
    for (const [p, state] of new_states)
      puts.push(this.ns.put(`partitions/${topic.name}/${p}`).value(JSON.stringify(state)));
    const result = await this.ns
      .if(key, 'Mod', '==', mod_revision)
      .then(...puts)
      .commit();
    return result.succeeded;
  }

  /**
   * Writes a partition state if the key is unchanged since `mod_revision` and, for a controller,
   * the controller key still has the epoch it was elected with. The key's new mod revision, or
   * null when it was not written.
   */
  async update_partition(
    topic: string,
    partition: number,
    state: PartitionState,
    mod_revision: string,
    controller_epoch?: string,
  ): Promise<string | null> {
    const key = `partitions/${topic}/${partition}`;
    let txn = this.ns.if(key, 'Mod', '==', mod_revision);
    if (controller_epoch !== undefined) txn = txn.and('controller', 'Create', '==', controller_epoch);
    const result = await txn.then(this.ns.put(key).value(JSON.stringify(state))).commit();
    return result.succeeded ? result.header.revision : null;
  }

  // ---------------------------------------------------------------- producer ids and group configs

  /** Reserves `count` producer ids; returns the first. */
  async allocate_producer_ids(count: number): Promise<number> {
    for (;;) {
      const kv = await this.ns.get('producer_ids').exec();
      const current = kv.kvs[0];
      const start = current ? Number(current.value.toString('utf8')) : 0;
      const txn = current
        ? this.ns.if('producer_ids', 'Mod', '==', current.mod_revision)
        : this.ns.if('producer_ids', 'Create', '==', 0);
      const result = await txn.then(this.ns.put('producer_ids').value(String(start + count))).commit();
      if (result.succeeded) return start;
    }
  }

  async set_routing_definitions(vhost: string, definitions: RoutingDefinitions): Promise<void> {
    await this.ns.put(`routing/${encodeURIComponent(vhost)}`).value(JSON.stringify(definitions));
  }

  async set_scram(user: string, hash: 'sha256' | 'sha512', credential: StoredScram | null): Promise<void> {
    const key = `users/${encodeURIComponent(user)}/${hash}`;
    if (credential) await this.ns.put(key).value(JSON.stringify(credential));
    else await this.ns.delete().key(key);
  }

  async set_broker_configs(scope: string, configs: Readonly<Record<string, string>>): Promise<void> {
    const key = `broker_configs/${scope}`;
    if (Object.keys(configs).length > 0) await this.ns.put(key).value(JSON.stringify(configs));
    else await this.ns.delete().key(key);
  }

  async set_client_quota(entity: QuotaEntity, values: QuotaValues | null): Promise<void> {
    const key = `quotas/${crypto.createHash('sha256').update(quota_entity_key(entity)).digest('hex')}`;
    if (values) await this.ns.put(key).value(JSON.stringify({ entity, values } satisfies ClientQuota));
    else await this.ns.delete().key(key);
  }

  /** Adds and removes ACL bindings in one transaction. */
  async change_acls(added: readonly AclBinding[], removed: readonly AclBinding[]): Promise<void> {
    const key = (binding: AclBinding) =>
      `acls/${crypto.createHash('sha256').update(binding_key(binding)).digest('hex')}`;
    const operations = [
      ...removed.map((binding) => this.ns.delete().key(key(binding))),
      ...added.map((binding) => this.ns.put(key(binding)).value(JSON.stringify(binding))),
    ];
    await this.ns
      .if('cluster_id', 'Create', '>', 0)
      .then(...operations)
      .commit();
  }

  async set_group_configs(group_id: string, configs: Record<string, string>): Promise<void> {
    if (Object.keys(configs).length === 0) await this.ns.delete().key(`group_configs/${group_id}`);
    else await this.ns.put(`group_configs/${group_id}`).value(JSON.stringify(configs));
  }
}
