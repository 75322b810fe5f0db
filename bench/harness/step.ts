// One step of the side-by-side benchmark: a workload run once on a started system, with a progress
// bar, the broker's CPU and memory sampled and the client's CPU measured, turned into the report's
// WorkloadResult (an error becomes a result with the message, so the run goes on).
import type cliProgress from 'cli-progress';
import { client_cpu_seconds, ServerSampler } from './machine.ts';
import { QUEUE_CONSUMERS, type Step } from './profiles.ts';
import type { WorkloadResult } from './report.ts';
import type { LatencyResult, PublishParams, QueueParams, SystemUnderTest, ThroughputResult } from './types.ts';

type BaseResult = Pick<
  WorkloadResult,
  | 'system'
  | 'label'
  | 'durability'
  | 'durability_detail'
  | 'client'
  | 'workload'
  | 'payload_bytes'
  | 'partitions'
  | 'producers'
  | 'consumers'
>;

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export async function run_step(
  system: SystemUnderTest,
  step: Step,
  time_limit_ms: number,
  bars: cliProgress.MultiBar,
): Promise<WorkloadResult> {
  const base: BaseResult = {
    system: system.id,
    label: system.label,
    durability: system.durability,
    durability_detail: system.durability_detail,
    client: system.client,
    workload: step.workload,
    payload_bytes: step.payload_bytes,
    partitions: step.partitions,
    producers: step.producers,
    ...(step.consumers !== undefined ? { consumers: step.consumers } : {}),
  };
  const consumers = step.consumers !== undefined ? ` c${step.consumers}` : '';
  const title =
    `${system.id} ${step.workload} ${step.payload_bytes}B p${step.partitions} x${step.producers}${consumers}`.padEnd(
      52,
    );
  const total = step.workload === 'latency' ? Math.round((step.rate_per_s! * step.duration_ms!) / 1000) : step.messages;
  const bar = bars.create(total, 0, { title });
  const sampler = new ServerSampler(() => system.server_pids());
  const client_cpu_before = client_cpu_seconds();
  try {
    const progress = (done: number) => bar.update(Math.min(done, total));
    const outcome = await run_workload(system, step, time_limit_ms, progress);
    const { cpu_s, peak_rss_bytes } = sampler.stop();
    const whole_client_cpu_s = client_cpu_seconds() - client_cpu_before;
    bar.update(total);
    if ('samples_ms' in outcome) return latency_result(base, step, outcome, cpu_s, peak_rss_bytes, whole_client_cpu_s);
    // A system whose workload has an untimed setup measured the timed part itself.
    const client_cpu_s = outcome.client_cpu_s ?? whole_client_cpu_s;
    const per_msg = (seconds: number) => (outcome.messages > 0 ? (seconds * 1e6) / outcome.messages : 0);
    return {
      ...base,
      messages: outcome.messages,
      elapsed_ms: outcome.elapsed_ms,
      msgs_per_s: outcome.messages / (outcome.elapsed_ms / 1000),
      mb_per_s: outcome.bytes / 1e6 / (outcome.elapsed_ms / 1000),
      truncated: Boolean(outcome.truncated),
      cpu_s,
      cpu_us_per_msg: per_msg(cpu_s),
      client_cpu_s,
      client_cpu_us_per_msg: per_msg(client_cpu_s),
      peak_rss_mib: peak_rss_bytes / 2 ** 20,
    };
  } catch (error) {
    const { cpu_s, peak_rss_bytes } = sampler.stop();
    return {
      ...base,
      messages: 0,
      elapsed_ms: 0,
      msgs_per_s: 0,
      mb_per_s: 0,
      truncated: false,
      cpu_s,
      cpu_us_per_msg: 0,
      client_cpu_s: client_cpu_seconds() - client_cpu_before,
      client_cpu_us_per_msg: 0,
      peak_rss_mib: peak_rss_bytes / 2 ** 20,
      error: error instanceof Error ? error.message : String(error),
    };
  }
}

/** Runs the step's workload on the system. */
async function run_workload(
  system: SystemUnderTest,
  step: Step,
  time_limit_ms: number,
  progress: (done: number) => void,
): Promise<ThroughputResult | LatencyResult> {
  const params: PublishParams = {
    messages: step.messages,
    payload_bytes: step.payload_bytes,
    partitions: step.partitions,
    producers: step.producers,
    time_limit_ms,
  };
  if (step.workload === 'publish') return system.publish(params, progress);
  if (step.workload === 'publish_consume') return system.publish_consume(params, progress);
  if (step.workload === 'drain') return system.drain(params, progress);
  if (step.workload === 'publish_single') {
    if (!system.publish_single) throw new Error('no one-message-per-send driver');
    return system.publish_single(params, progress);
  }
  if (step.workload === 'drain_each') {
    if (!system.drain_each) throw new Error('no per-message consumer driver');
    return system.drain_each(params, progress);
  }
  if (step.workload === 'queue') {
    if (!system.queue) throw new Error('no queue driver');
    const queue_params: QueueParams = { ...params, consumers: step.consumers ?? QUEUE_CONSUMERS };
    return system.queue(queue_params, progress);
  }
  return system.latency({
    rate_per_s: step.rate_per_s!,
    duration_ms: step.duration_ms!,
    payload_bytes: step.payload_bytes,
  });
}

function latency_result(
  base: BaseResult,
  step: Step,
  latency: LatencyResult,
  cpu_s: number,
  peak_rss_bytes: number,
  client_cpu_s: number,
): WorkloadResult {
  const sorted = Float64Array.from(latency.samples_ms).sort();
  return {
    ...base,
    messages: latency.received,
    elapsed_ms: step.duration_ms!,
    msgs_per_s: latency.received / (step.duration_ms! / 1000),
    mb_per_s: 0,
    truncated: false,
    cpu_s,
    cpu_us_per_msg: latency.received > 0 ? (cpu_s * 1e6) / latency.received : 0,
    client_cpu_s,
    client_cpu_us_per_msg: latency.received > 0 ? (client_cpu_s * 1e6) / latency.received : 0,
    peak_rss_mib: peak_rss_bytes / 2 ** 20,
    latency: {
      p50_ms: percentile(sorted, 0.5),
      p99_ms: percentile(sorted, 0.99),
      p999_ms: percentile(sorted, 0.999),
      max_ms: sorted.length > 0 ? sorted[sorted.length - 1]! : NaN,
      sent: latency.sent,
      received: latency.received,
      rate_per_s: step.rate_per_s!,
    },
  };
}
