// The core API's view of where things are (ClusterApi), delayed delivery's status (DelayedApi) and
// dead-letter redrive (DeadLettersApi).
import type { ClusterApi, DeadLettersApi, DelayedApi } from '../../core/api.ts';
import type { CoreInternals } from './internals.ts';
import { OFFSETS_TOPIC } from '../offset_store.ts';
import { redrive_dead_letters, type RedriveDeps } from '../queues/redrive.ts';
import { SHARE_STATE_TOPIC } from '../queues/share_state_store.ts';
import { TXN_STATE_TOPIC } from '../txn/txn_log.ts';

export function cluster_api(broker: CoreInternals): ClusterApi {
  const { topic_index: topics, placement } = broker;
  return {
    clustered: placement.clustered,
    brokers: (self, listener) => placement.brokers(self, listener),
    controller_id: () => placement.controller_id(),
    partition_info: (topic, partition) => placement.partition_info(topic, partition),
    partition_reassignment: (topic, partition) => placement.partition_reassignment(topic, partition),
    async reassign(topic, partition, replicas) {
      topics.check(topic, partition);
      await placement.reassign(topic, partition, replicas);
    },
    async elect_leader(topic, partition, election) {
      topics.check(topic, partition);
      await placement.elect_leader(topic, partition, election);
    },
    coordinator_node: (kind) =>
      placement.leader_of(kind === 'group' ? OFFSETS_TOPIC : kind === 'share' ? SHARE_STATE_TOPIC : TXN_STATE_TOPIC, 0),
  };
}

export function delayed_api(broker: CoreInternals): DelayedApi {
  return {
    get is_host() {
      return broker.coordinators.delayed_host !== null;
    },
    status() {
      const delayed = broker.coordinators.delayed;
      return {
        pending: delayed.pending,
        counters: delayed.counters,
        lateness_ms: delayed.lateness_ms,
        index_bytes: delayed.index_bytes,
        delay_max_ms: delayed.settings.delay_max_ms,
      };
    },
  };
}

export function dead_letters_api(broker: CoreInternals): DeadLettersApi {
  const deps: RedriveDeps = {
    topics: broker.topic_index,
    clock: broker.clock,
    reader: (topic, partition) => broker.partition_reader(topic, partition),
    produce_anywhere: (topic, partition, records) => broker.produce_anywhere(topic, partition, records),
  };
  return { redrive: (request) => redrive_dead_letters(deps, request) };
}
