// /api/v1/cluster, /api/v1/stats (polled every second by the console's throughput chart) and
// /api/v1/delayed.
import { setting } from '../../core/index.ts';
import type { Router } from './router.ts';

/** Settings these answers show, under their names in the settings table. */
const NODE_ID = setting('node_id').names.http!;
const DELAY_MAX_MS = setting('delayed.delay_max_ms').names.http!;

/** Recent delivery latenesses used for the delayed-delivery percentiles. */
const LATENESS_SAMPLES_USED = 1_000;

export function add_cluster_routes(router: Router): void {
  router.add('GET', '/api/v1/cluster', (_request, ctx) => {
    const { core } = ctx;
    const brokers = core.cluster.brokers(ctx.kafka_address(), ctx.kafka_listener_name());
    const controller = core.cluster.controller_id();
    return {
      status: 200,
      body: {
        cluster_id: core.cluster_id,
        [NODE_ID]: core.node_id,
        clustered: core.cluster.clustered,
        brokers,
        controller: controller < 0 ? null : controller,
      },
    };
  });

  router.add('GET', '/api/v1/stats', (_request, ctx) => {
    const { core } = ctx;
    const totals = core.stats.totals;
    let partitions = 0;
    const topics = core.topics.list();
    for (const topic of topics) partitions += topic.partitions;
    return {
      status: 200,
      body: {
        now_ms: core.clock.now_ms(),
        messages_in_total: totals.messages_in,
        bytes_in_total: totals.bytes_in,
        messages_out_total: totals.messages_out,
        bytes_out_total: totals.bytes_out,
        connections: ctx.connections(),
        topics: topics.length,
        partitions,
        uptime_ms: Math.round(process.uptime() * 1000),
      },
    };
  });

  router.add('GET', '/api/v1/delayed', (_request, ctx) => {
    const delayed = ctx.core.delayed.status();
    const recent = delayed.lateness_ms.slice(-LATENESS_SAMPLES_USED).sort((a, b) => a - b);
    const percentile = (p: number) =>
      recent.length === 0 ? null : recent[Math.min(recent.length - 1, Math.floor(p * recent.length))]!;
    return {
      status: 200,
      body: {
        pending: delayed.pending,
        scheduled_total: delayed.counters.scheduled,
        delivered_total: delayed.counters.delivered,
        dropped_total: delayed.counters.dropped,
        index_bytes: delayed.index_bytes,
        [DELAY_MAX_MS]: delayed.delay_max_ms,
        lateness_ms: { p50: percentile(0.5), p99: percentile(0.99), samples: recent.length },
      },
    };
  });
}
