// DescribeCluster 0-1: the cluster id, the controller and the brokers clients may connect to.
import { DESCRIBE_CLUSTER } from '../../../protocol/kafka/messages/60_describe_cluster.ts';
import { NO_AUTHORIZED_OPERATIONS, kafka_handler } from '../handler.ts';
import { authorized_operations } from '../authorize.ts';

/** endpoint_type 1: the brokers (not the controllers) answer. */
const ENDPOINT_BROKERS = 1;

export const describe_cluster_handler = kafka_handler(
  DESCRIBE_CLUSTER,
  { min: 0, max: 1, notes: 'the registered brokers and the controller' },
  (request, ctx) => ({
    throttle_time_ms: 0,
    error_code: 0,
    error_message: null,
    endpoint_type: ENDPOINT_BROKERS,
    cluster_id: ctx.core.cluster_id,
    controller_id: ctx.core.cluster.controller_id(),
    brokers: ctx.core.cluster
      .brokers({ host: ctx.listener.advertised_host, port: ctx.listener.advertised_port }, ctx.listener.name)
      .map((b) => ({ broker_id: b.node_id, host: b.host, port: b.port, rack: null })),
    cluster_authorized_operations: request.include_cluster_authorized_operations
      ? authorized_operations(ctx, 'cluster', '')
      : NO_AUTHORIZED_OPERATIONS,
  }),
);
