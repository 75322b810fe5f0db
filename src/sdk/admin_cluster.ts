// Admin: the cluster. Its brokers, controller and id, by DescribeCluster (or, from a broker that
// does not know it, by Metadata). Routing and retries are admin_requests.ts's.
import { KafkaProtocolError, UnsupportedApiError } from './errors.ts';
import type { ClusterDescription } from './admin_types.ts';
import type { AdminRequests } from './admin_requests.ts';
import type { ResponseOf } from '../protocol/kafka/schema.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { DESCRIBE_CLUSTER } from '../protocol/kafka/messages/60_describe_cluster.ts';

/** The brokers, the controller and the cluster id (DescribeCluster, or Metadata on older brokers). */
export async function describe_cluster(admin: AdminRequests): Promise<ClusterDescription> {
  const cluster = admin.cluster;
  return cluster.with_retry('DescribeCluster', async () => {
    const connection = await cluster.any();
    let response: ResponseOf<typeof DESCRIBE_CLUSTER>;
    try {
      ({ response } = await connection.send(DESCRIBE_CLUSTER, 0, 2, {
        include_cluster_authorized_operations: false,
        endpoint_type: 1,
        include_fenced_brokers: false,
      }));
    } catch (error) {
      if (!(error instanceof UnsupportedApiError)) throw error;
      await cluster.refresh_metadata([]);
      return {
        brokers: [...cluster.brokers.values()]
          .map((b) => ({ nodeId: b.node_id, host: b.host, port: b.port }))
          .sort((a, b) => a.nodeId - b.nodeId),
        controller: cluster.controller_id < 0 ? null : cluster.controller_id,
        clusterId: cluster.cluster_id ?? '',
      };
    }
    const code = response.error_code;
    if (code !== ErrorCode.NONE) throw new KafkaProtocolError(code, 'DescribeCluster', response.error_message);
    const controller = response.controller_id;
    return {
      brokers: response.brokers
        .map((b) => ({ nodeId: b.broker_id, host: b.host, port: b.port }))
        .sort((a, b) => a.nodeId - b.nodeId),
      controller: controller < 0 ? null : controller,
      clusterId: response.cluster_id,
    };
  });
}
