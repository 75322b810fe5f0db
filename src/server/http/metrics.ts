// Prometheus metrics of one broker, in a registry of its own (several brokers may share a process).
// Traffic, lag, queue and delay figures are read from the broker core's plain counters when scraped;
// only the two histograms are fed as things happen, through the core's observer hooks (the storage
// layer and the Kafka handlers know nothing of Prometheus).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Core, PartitionTraffic, QueueStats } from '../../core/index.ts';
import type { AmqpSource } from './api_amqp.ts';

const REQUEST_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const FSYNC_BUCKETS_SECONDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

export interface MetricsSources {
  core: Core;
  /** Kafka client connections open now. */
  connections(): number;
  /** The AMQP listener's connections, when it runs. */
  amqp?: AmqpSource | null;
}

/** What the metric builders below share: the registry, the core, and a once-per-scrape memo. */
interface MetricContext {
  registers: Registry[];
  core: Core;
  per_scrape<T>(compute: () => T): () => T;
}

function traffic_metrics({ registers, core, per_scrape }: MetricContext): void {
  // Counters of deleted topics are dropped before traffic is read.
  const prune_traffic = per_scrape(() => core.stats.prune());
  const traffic = (name: string, help: string, pick: (t: PartitionTraffic) => number) =>
    new Counter({
      name,
      help,
      labelNames: ['topic', 'partition'],
      registers,
      collect() {
        prune_traffic();
        this.reset();
        for (const t of core.stats.traffic()) {
          const value = pick(t);
          if (value > 0) this.inc({ topic: t.topic, partition: String(t.partition) }, value);
        }
      },
    });
  traffic('sluice_messages_in_total', 'Messages accepted from producers', (t) => t.messages_in);
  traffic('sluice_bytes_in_total', 'Record batch bytes accepted from producers', (t) => t.bytes_in);
  traffic(
    'sluice_messages_out_total',
    'Messages handed to consumers (Fetch counts whole batches, ShareFetch acquired records)',
    (t) => t.messages_out,
  );
  traffic('sluice_bytes_out_total', 'Record batch bytes handed to consumers', (t) => t.bytes_out);
}

function lag_metric({ registers, core }: MetricContext): void {
  new Gauge({
    name: 'sluice_consumer_group_lag',
    help: 'High watermark minus committed offset, per consumer group and partition',
    labelNames: ['group', 'topic', 'partition'],
    registers,
    collect() {
      this.reset();
      if (!core.groups.is_coordinator) return; // in a cluster, the coordinator reports lag
      for (const group of core.groups.ids_with_offsets()) {
        for (const l of core.groups.lag_now(group))
          this.set({ group, topic: l.topic, partition: String(l.partition) }, l.lag);
      }
    },
  });
}

function queue_metrics({ registers, core, per_scrape }: MetricContext): void {
  // One look at every share group per scrape, shared by the queue metrics below.
  const queues = per_scrape(() =>
    core.shares.is_coordinator ? core.shares.group_ids().flatMap((id) => core.shares.queue_stats(id) ?? []) : [],
  );
  const queue_gauge = (name: string, help: string, pick: (q: QueueStats) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['group'],
      registers,
      collect() {
        this.reset();
        for (const q of queues()) this.set({ group: q.group_id }, pick(q));
      },
    });
  const queue_counter = (name: string, help: string, pick: (q: QueueStats) => number) =>
    new Counter({
      name,
      help,
      labelNames: ['group'],
      registers,
      collect() {
        this.reset();
        for (const q of queues()) if (pick(q) > 0) this.inc({ group: q.group_id }, pick(q));
      },
    });
  queue_gauge(
    'sluice_queue_in_flight',
    'Records acquired by share-group consumers and not yet settled',
    (q) => q.in_flight,
  );
  queue_gauge(
    'sluice_queue_available',
    'Records a share group may hand out now or after their retry backoff',
    (q) => q.available,
  );
  queue_counter(
    'sluice_queue_redeliveries_total',
    'Records handed out again (released, lock timed out, consumer gone)',
    (q) => q.counters.redeliveries,
  );
  queue_counter(
    'sluice_queue_dead_lettered_total',
    'Records written to a dead-letter topic',
    (q) => q.counters.dead_lettered,
  );
  queue_counter(
    'sluice_queue_expired_total',
    'Records whose time to live ran out before they were settled',
    (q) => q.counters.expired,
  );
}

function broker_metrics({ registers, core }: MetricContext, connections: () => number): void {
  new Gauge({
    name: 'sluice_delayed_pending',
    help: 'Delayed records waiting for their due time',
    registers,
    collect() {
      this.set(core.delayed.is_host ? core.delayed.status().pending : 0);
    },
  });
  new Counter({
    name: 'sluice_delayed_delivered_total',
    help: 'Delayed records appended to their topics',
    registers,
    collect() {
      this.reset();
      if (core.delayed.is_host) this.inc(core.delayed.status().counters.delivered);
    },
  });
  new Gauge({
    name: 'sluice_connections',
    help: 'Kafka client connections open',
    registers,
    collect() {
      this.set(connections());
    },
  });
  new Gauge({
    name: 'sluice_partitions_cut_at_recovery',
    help: 'Local logs whose tail recovery cut at start (torn, cut short or corrupt); each left its ISR to catch up',
    registers,
    collect() {
      this.set(core.partitions.cut_at_recovery().length);
    },
  });
  new Gauge({
    name: 'sluice_partitions_offline',
    help: 'Partitions taken offline by a failed write or fsync',
    registers,
    collect() {
      this.set(core.partitions.offline().length);
    },
  });
}

function compaction_metrics({ registers, core, per_scrape }: MetricContext): void {
  const statuses = per_scrape(() => core.partitions.compaction());
  new Gauge({
    name: 'sluice_log_cleaner_dirty_ratio',
    help: "Of a compacted partition's cleanable bytes here, the share its log cleaner has not compacted yet",
    labelNames: ['topic', 'partition'],
    registers,
    collect() {
      this.reset();
      for (const s of statuses()) this.set({ topic: s.topic, partition: String(s.partition) }, s.dirty_ratio);
    },
  });
  new Counter({
    name: 'sluice_log_cleaner_bytes_total',
    help: 'Segment bytes the log cleaner read and wrote, per compacted partition',
    labelNames: ['topic', 'partition', 'direction'],
    registers,
    collect() {
      this.reset();
      for (const s of statuses()) {
        const labels = { topic: s.topic, partition: String(s.partition) };
        if (s.bytes_read > 0) this.inc({ ...labels, direction: 'read' }, s.bytes_read);
        if (s.bytes_written > 0) this.inc({ ...labels, direction: 'written' }, s.bytes_written);
      }
    },
  });
}

function amqp_metrics({ registers, per_scrape }: MetricContext, amqp: AmqpSource): void {
  const connections = per_scrape(() => amqp.connections());
  const gauge = (name: string, help: string, pick: () => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(pick());
      },
    });
  gauge('sluice_amqp_connections', 'AMQP client connections open', () => connections().length);
  gauge('sluice_amqp_channels', 'AMQP channels open', () => connections().reduce((n, c) => n + c.channels, 0));
  gauge('sluice_amqp_consumers', 'AMQP consumers (basic.consume) active', () =>
    connections().reduce((n, c) => n + c.consumers, 0),
  );
}

export class BrokerMetrics {
  readonly registry = new Registry();
  private readonly request_children = new Map<string, { observe(value: number): void }>();
  private readonly request_seconds: Histogram<'api'>;
  private readonly fsync_seconds: Histogram;
  /** Bumped per scrape: figures shared by several metrics are computed once per scrape. */
  private scrape = 0;

  constructor(private readonly sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.request_seconds = new Histogram({
      name: 'sluice_request_duration_seconds',
      help: 'Kafka requests by API, from decoded request to response (long polls included)',
      labelNames: ['api'],
      buckets: REQUEST_BUCKETS_SECONDS,
      registers,
    });
    this.fsync_seconds = new Histogram({
      name: 'sluice_fsync_duration_seconds',
      help: 'Group-commit flush rounds (the parallel fdatasyncs an acknowledgement waits for)',
      buckets: FSYNC_BUCKETS_SECONDS,
      registers,
    });
    const context: MetricContext = { registers, core: sources.core, per_scrape: (compute) => this.per_scrape(compute) };
    traffic_metrics(context);
    compaction_metrics(context);
    lag_metric(context);
    queue_metrics(context);
    broker_metrics(context, sources.connections);
    if (sources.amqp) amqp_metrics(context, sources.amqp);
  }

  private per_scrape<T>(compute: () => T): () => T {
    let computed_at = -1;
    let value: T;
    return () => {
      if (computed_at !== this.scrape) {
        value = compute();
        computed_at = this.scrape;
      }
      return value;
    };
  }

  /** Starts feeding the histograms from the broker's hooks. */
  attach(): void {
    const { stats } = this.sources.core;
    stats.observer = { request: (api, duration_ms) => this.request_child(api).observe(duration_ms / 1000) };
    stats.set_flush_observer((duration_ms) => this.fsync_seconds.observe(duration_ms / 1000));
  }

  detach(): void {
    const { stats } = this.sources.core;
    stats.observer = null;
    stats.set_flush_observer(null);
  }

  private request_child(api: string) {
    let child = this.request_children.get(api);
    if (!child) this.request_children.set(api, (child = this.request_seconds.labels({ api })));
    return child;
  }

  get content_type(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    this.scrape++;
    return this.registry.metrics();
  }
}
