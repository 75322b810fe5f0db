// The composition of a cluster member: its etcd connection, the cluster placement and the metadata
// store on etcd. Apart from start_broker.ts so that a single node never loads the cluster's parts
// (etcd's gRPC client alone takes a fifth of a second to load).
import { Broker, type BrokerParts } from '../broker/broker.ts';
import { ClusterNode, type ClusterOptions } from '../cluster/cluster_node.ts';
import { ClusterPlacement } from '../cluster/cluster_placement.ts';
import { EtcdMetadataStore } from '../cluster/etcd_metadata_store.ts';
import { new_uuid } from '../core/metadata_store.ts';
import type { Storage } from '../storage/index.ts';

/** What the composition root has built before it knows the placement. */
export type CommonParts = Omit<BrokerParts, 'storage' | 'metadata' | 'placement'>;

/**
 * Connects to etcd (failing with the endpoint named), opens storage through `open_storage` and
 * starts the core on the cluster placement; the member joins once its listener is up.
 */
export async function open_cluster_member(
  cluster: ClusterOptions,
  common: CommonParts,
  open_storage: () => Promise<Storage>,
): Promise<Broker> {
  const { node_id, io, data_dir, clock, logger } = common;
  const { store: etcd, cluster_id } = await ClusterNode.connect(cluster, node_id, logger);
  const storage = await open_storage();
  const placement = new ClusterPlacement({ node_id, options: cluster, etcd, io, data_dir, clock, logger });
  const metadata = new EtcdMetadataStore(etcd, await cluster_id(new_uuid()), () => placement.node);
  return Broker.start({ ...common, storage, metadata, placement });
}
