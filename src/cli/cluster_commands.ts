// `sluice cluster status` and `sluice topic reassign`: what the cluster looks like from its
// metadata, and moving partitions between brokers (a new broker included).
import { type ClientFlags, print, with_admin } from './client_support.ts';
import { KafkaProtocolError } from '../sdk/errors.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';

interface PartitionStatus {
  topic: string;
  partition: number;
  leader: number;
  replicas: number[];
  isr: number[];
}

export async function cluster_status(options: ClientFlags): Promise<void> {
  const status = await with_admin(options, async (admin) => {
    const cluster = await admin.describeCluster();
    const names = await admin.listTopics();
    const metadata = names.length === 0 ? { topics: [] } : await admin.fetchTopicMetadata({ topics: names });
    const partitions: PartitionStatus[] = metadata.topics.flatMap((t) =>
      t.partitions.map((p) => ({
        topic: t.name,
        partition: p.partitionId,
        leader: p.leader,
        replicas: p.replicas,
        isr: p.isr,
      })),
    );
    const leading = new Map<number, number>();
    for (const p of partitions) if (p.leader >= 0) leading.set(p.leader, (leading.get(p.leader) ?? 0) + 1);
    return {
      cluster_id: cluster.clusterId,
      controller: cluster.controller,
      brokers: cluster.brokers.map((b) => ({
        node_id: b.nodeId,
        host: b.host,
        port: b.port,
        leading: leading.get(b.nodeId) ?? 0,
      })),
      partitions: partitions.length,
      under_replicated: partitions.filter((p) => p.leader >= 0 && p.isr.length < p.replicas.length),
      offline: partitions.filter((p) => p.leader < 0),
    };
  });
  print(options, status, () =>
    [
      `cluster ${status.cluster_id}  controller ${status.controller ?? 'none'}  ${status.partitions} partitions`,
      ...status.brokers.map((b) => `  broker ${b.node_id}  ${b.host}:${b.port}  leads ${b.leading}`),
      status.under_replicated.length === 0
        ? '  every partition has its full ISR'
        : `  under-replicated: ${status.under_replicated.map(describe).join(', ')}`,
      ...(status.offline.length === 0 ? [] : [`  OFFLINE (no leader): ${status.offline.map(describe).join(', ')}`]),
    ].join('\n'),
  );
}

function describe(p: PartitionStatus): string {
  return `${p.topic}-${p.partition} (isr ${p.isr.join(',')} of ${p.replicas.join(',')})`;
}

/**
 * Moves one partition (or, without --partition, every partition) of a topic to the given brokers;
 * with --cancel gives up the moves in progress instead (partitions not being moved are skipped).
 */
export async function topic_reassign(
  name: string,
  options: ClientFlags & { partition?: string; replicas?: string; cancel?: boolean; list?: boolean },
): Promise<void> {
  if (options.list) return topic_reassign_list(name, options);
  if (options.cancel) return topic_reassign_cancel(name, options);
  if (options.replicas === undefined) throw new Error('--replicas: the brokers to move to, e.g. 2,3,4 (or --cancel)');
  const replicas = options.replicas.split(',').map((id) => Number(id.trim()));
  if (replicas.some((id) => !Number.isInteger(id) || id < 0))
    throw new Error(`--replicas: expected node ids like 1,2,3, got ${JSON.stringify(options.replicas)}`);
  const moved = await with_admin(options, async (admin) => {
    const metadata = await admin.fetchTopicMetadata({ topics: [name] });
    const all = metadata.topics[0]!.partitions.map((p) => p.partitionId).sort((a, b) => a - b);
    const partitions = options.partition === undefined ? all : [Number(options.partition)];
    await admin.alterPartitionReassignments({
      topics: [{ topic: name, partitions: partitions.map((partition) => ({ partition, replicas })) }],
    });
    return { topic: name, partitions, replicas };
  });
  print(
    options,
    moved,
    () =>
      `reassigning ${name} partition(s) ${moved.partitions.join(',')} to brokers ${replicas.join(',')}; they switch ` +
      `once the new replicas are in sync (sluice cluster status)`,
  );
}

async function topic_reassign_list(
  name: string,
  options: ClientFlags & { partition?: string; replicas?: string; cancel?: boolean },
): Promise<void> {
  if (options.replicas !== undefined || options.cancel) throw new Error('--list takes no --replicas or --cancel');
  const listed = await with_admin(options, async (admin) => {
    const metadata = await admin.fetchTopicMetadata({ topics: [name] });
    const all = metadata.topics[0]!.partitions.map((p) => p.partitionId).sort((a, b) => a - b);
    const partitions = options.partition === undefined ? all : [Number(options.partition)];
    const found = await admin.listPartitionReassignments({ topics: [{ topic: name, partitions }] });
    return { topic: name, partitions: found.topics.flatMap((t) => t.partitions) };
  });
  print(options, listed, () =>
    listed.partitions.length === 0
      ? `no partition of ${name} is being reassigned`
      : listed.partitions
          .map(
            (p) =>
              `${name} partition ${p.partition}: replicas ${p.replicas.join(',')}; adding ` +
              `${p.addingReplicas.join(',') || '-'}; removing ${p.removingReplicas.join(',') || '-'}`,
          )
          .join('\n'),
  );
}

async function topic_reassign_cancel(
  name: string,
  options: ClientFlags & { partition?: string; replicas?: string },
): Promise<void> {
  if (options.replicas !== undefined) throw new Error('--cancel takes no --replicas');
  const cancelled = await with_admin(options, async (admin) => {
    const metadata = await admin.fetchTopicMetadata({ topics: [name] });
    const all = metadata.topics[0]!.partitions.map((p) => p.partitionId).sort((a, b) => a - b);
    const partitions = options.partition === undefined ? all : [Number(options.partition)];
    const done: number[] = [];
    for (const partition of partitions) {
      try {
        await admin.alterPartitionReassignments({
          topics: [{ topic: name, partitions: [{ partition, replicas: null }] }],
        });
        done.push(partition);
      } catch (error) {
        // Without --partition, partitions that are not being moved are left alone.
        if (!(
          options.partition === undefined &&
          error instanceof KafkaProtocolError &&
          error.code === ErrorCode.NO_REASSIGNMENT_IN_PROGRESS
        ))
          throw error;
      }
    }
    return { topic: name, cancelled: done };
  });
  print(options, cancelled, () =>
    cancelled.cancelled.length === 0
      ? `no partition of ${name} is being reassigned`
      : `cancelled the reassignment of ${name} partition(s) ${cancelled.cancelled.join(',')}: back on their ` +
        `replicas from before`,
  );
}
