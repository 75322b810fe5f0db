// The side-by-side benchmark's profiles (smoke, standard, full): the steps every system runs, the
// extra ones for the main Sluice system, the time limit, and which systems the targets compare.
import type { WorkloadResult } from './report.ts';

/** Every workload a profile may have (what --workloads accepts). */
export const WORKLOADS = [
  'publish',
  'publish_single',
  'publish_consume',
  'latency',
  'drain',
  'drain_each',
  'queue',
] as const satisfies ReadonlyArray<WorkloadResult['workload']>;

export interface Step {
  workload: WorkloadResult['workload'];
  payload_bytes: number;
  partitions: number;
  producers: number;
  /** Consumers sharing the queue (the queue workload). */
  consumers?: number;
  messages: number;
  rate_per_s?: number;
  duration_ms?: number;
}

export interface Profile {
  /** Steps every system runs. */
  common: Step[];
  /** Extra steps for the main Sluice system only (partition and producer sweeps, big backlogs). */
  sluice_extra: Step[];
  time_limit_ms: number;
  disk_probe_bytes: number;
}

/** The Sluice system that runs the extra steps and most targets judge. */
export const SLUICE_MAIN = 'sluice-lean-fsync';
/** The Sluice systems with the SDK and with kcat as the client (the client-library targets). */
export const SLUICE_SDK = 'sluice-sdk-fsync';
export const SLUICE_KCAT = 'sluice-kcat-fsync';
/** The Sluice system with a queue driver (the SDK's queue consumer), and the peer it is judged against. */
export const SLUICE_QUEUE = SLUICE_SDK;
export const QUEUE_PEER = 'rabbitmq-quorum';
export const QUEUE_CONSUMERS = 4;

export function profile(name: string, scale: number): Profile {
  const n = (count: number) => Math.max(1000, Math.round(count * scale));
  if (name === 'smoke') {
    return {
      common: [
        { workload: 'publish', payload_bytes: 100, partitions: 1, producers: 1, messages: n(20_000) },
        { workload: 'publish_single', payload_bytes: 100, partitions: 1, producers: 1, messages: n(20_000) },
        { workload: 'drain', payload_bytes: 100, partitions: 1, producers: 1, messages: n(20_000) },
        { workload: 'drain_each', payload_bytes: 100, partitions: 1, producers: 1, messages: n(20_000) },
        {
          workload: 'latency',
          payload_bytes: 100,
          partitions: 1,
          producers: 1,
          messages: 0,
          rate_per_s: 1000,
          duration_ms: 1000,
        },
        {
          workload: 'queue',
          payload_bytes: 100,
          partitions: 1,
          producers: 1,
          consumers: QUEUE_CONSUMERS,
          messages: n(20_000),
        },
      ],
      sluice_extra: [],
      time_limit_ms: 15_000,
      disk_probe_bytes: 16 * 1024 * 1024,
    };
  }
  const common: Step[] = [
    { workload: 'publish', payload_bytes: 100, partitions: 1, producers: 1, messages: n(1_000_000) },
    { workload: 'publish', payload_bytes: 1024, partitions: 1, producers: 1, messages: n(300_000) },
    { workload: 'publish_single', payload_bytes: 100, partitions: 1, producers: 1, messages: n(500_000) },
    { workload: 'publish_consume', payload_bytes: 100, partitions: 1, producers: 1, messages: n(500_000) },
    {
      workload: 'latency',
      payload_bytes: 100,
      partitions: 1,
      producers: 1,
      messages: 0,
      rate_per_s: 5000,
      duration_ms: 10_000,
    },
    { workload: 'drain', payload_bytes: 100, partitions: 1, producers: 1, messages: n(1_000_000) },
    { workload: 'drain_each', payload_bytes: 100, partitions: 1, producers: 1, messages: n(1_000_000) },
    {
      workload: 'queue',
      payload_bytes: 100,
      partitions: 1,
      producers: 1,
      consumers: QUEUE_CONSUMERS,
      messages: n(400_000),
    },
  ];
  const sluice_extra: Step[] = [
    { workload: 'publish', payload_bytes: 100, partitions: 8, producers: 1, messages: n(1_000_000) },
    { workload: 'publish', payload_bytes: 100, partitions: 64, producers: 1, messages: n(1_000_000) },
    { workload: 'publish', payload_bytes: 100, partitions: 8, producers: 4, messages: n(1_000_000) },
    { workload: 'publish', payload_bytes: 1024, partitions: 8, producers: 4, messages: n(300_000) },
  ];
  if (name === 'full') {
    sluice_extra.push(
      { workload: 'publish', payload_bytes: 100, partitions: 1000, producers: 1, messages: n(1_000_000) },
      { workload: 'publish', payload_bytes: 1024, partitions: 64, producers: 2, messages: n(300_000) },
      { workload: 'drain', payload_bytes: 100, partitions: 1, producers: 1, messages: n(10_000_000) },
    );
  }
  return {
    common,
    sluice_extra,
    time_limit_ms: name === 'full' ? 300_000 : 30_000,
    disk_probe_bytes: 256 * 1024 * 1024,
  };
}
