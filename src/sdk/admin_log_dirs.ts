// Admin: each broker's log directories (DescribeLogDirs, asked of every broker): the partitions it
// holds, their sizes, and, from a Sluice broker, a compacted partition's log cleaner progress.
import { KafkaProtocolError } from './errors.ts';
import type { AdminRequests } from './admin_requests.ts';
import type { BrokerLogDirs } from './admin_types.ts';
import { describe_cluster } from './admin_cluster.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { DESCRIBE_LOG_DIRS } from '../protocol/kafka/messages/35_describe_log_dirs.ts';
import type { ResponseOf } from '../protocol/kafka/schema.ts';

type Partition = ResponseOf<typeof DESCRIBE_LOG_DIRS>['results'][number]['topics'][number]['partitions'][number];

function progress_of(p: Partition) {
  if (p.sluice_dirty_ratio < 0) return null;
  return {
    dirtyRatio: p.sluice_dirty_ratio,
    firstDirtyOffset: p.sluice_first_dirty_offset,
    bytesRead: p.sluice_cleaner_bytes_read,
    bytesWritten: p.sluice_cleaner_bytes_written,
    lastCleanedMs: p.sluice_last_cleaned_ms,
  };
}

export async function describe_log_dirs(
  admin: AdminRequests,
  topics: ReadonlyArray<{ topic: string; partitions?: number[] }> | null,
): Promise<BrokerLogDirs[]> {
  const { brokers } = await describe_cluster(admin);
  // A topic named without partitions: all of them (the request names each one).
  const every = async (topic: string) => (await admin.cluster.topic(topic)).partitions.map((p) => p.partition);
  const asked = topics
    ? await Promise.all(
        topics.map(async (t) => ({ topic: t.topic, partitions: t.partitions ?? (await every(t.topic)) })),
      )
    : null;
  return Promise.all(
    brokers.map(({ nodeId }) =>
      admin.cluster.with_retry('DescribeLogDirs', async () => {
        const connection = await admin.cluster.node(nodeId);
        const { response } = await connection.send(DESCRIBE_LOG_DIRS, 0, 4, { topics: asked });
        if (response.error_code !== ErrorCode.NONE)
          throw new KafkaProtocolError(response.error_code, `DescribeLogDirs of broker ${nodeId}`);
        return {
          brokerId: nodeId,
          logDirs: response.results.map((dir) => ({
            logDir: dir.log_dir,
            totalBytes: dir.total_bytes,
            usableBytes: dir.usable_bytes,
            topics: dir.topics.map((t) => ({
              topic: t.name,
              partitions: t.partitions.map((p) => ({
                partition: p.partition_index,
                sizeBytes: p.partition_size,
                offsetLag: p.offset_lag,
                compaction: progress_of(p),
              })),
            })),
          })),
        };
      }),
    ),
  );
}
