// Turns benchmark results into the Markdown report and an SVG chart (no chart library: a few
// rectangles and labels are enough for bars).
import type { DurabilityClass } from './types.ts';

export interface WorkloadResult {
  system: string;
  label: string;
  durability: DurabilityClass;
  durability_detail: string;
  client: string;
  workload: 'publish' | 'publish_single' | 'publish_consume' | 'latency' | 'drain' | 'drain_each' | 'queue';
  payload_bytes: number;
  partitions: number;
  producers: number;
  /** Consumers sharing the queue (the queue workload only). */
  consumers?: number;
  messages: number;
  elapsed_ms: number;
  msgs_per_s: number;
  mb_per_s: number;
  truncated: boolean;
  /** The broker's CPU seconds (user + system) during the step, and per message. */
  cpu_s: number;
  cpu_us_per_msg: number;
  /**
   * The client's: the harness process (every thread) and the children it reaped during the step
   * (kcat), over the timed part when the workload has an untimed setup; per message.
   */
  client_cpu_s: number;
  client_cpu_us_per_msg: number;
  peak_rss_mib: number;
  latency?: {
    p50_ms: number;
    p99_ms: number;
    p999_ms: number;
    max_ms: number;
    sent: number;
    received: number;
    rate_per_s: number;
  };
  error?: string;
}

export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean | null;
  note: string;
}

export interface Report {
  started_at: string;
  command: string;
  profile: string;
  machine: Record<string, unknown>;
  limits: { disk_16k_each_mb_s: number; disk_1m_per_fsync_mb_s: number; fsyncs_per_s: number; loopback_mb_s: number };
  cold_start_ms: number | null;
  unavailable: Array<{ id: string; label: string; reason: string }>;
  results: WorkloadResult[];
  targets: TargetCheck[];
}

const CLASS_TITLES: Record<DurabilityClass, string> = {
  fsync: 'Acknowledged after fsync',
  periodic: 'Acknowledged before fsync; fsync on a timer',
  none: 'Acknowledged before fsync; flushing left to the OS',
};

const n0 = (v: number) => Math.round(v).toLocaleString('en-US');
const n1 = (v: number) => v.toFixed(1);
const n2 = (v: number) => v.toFixed(2);

function cell(
  results: WorkloadResult[],
  system: string,
  workload: WorkloadResult['workload'],
  payload: number,
  partitions = 1,
  producers = 1,
): string {
  const r = results.find(
    (x) =>
      x.system === system &&
      x.workload === workload &&
      x.payload_bytes === payload &&
      x.partitions === partitions &&
      x.producers === producers,
  );
  if (!r) return '–';
  if (r.error) return `n/a (${r.error.split('\n')[0]!.slice(0, 40)})`;
  if (workload === 'latency' && r.latency)
    return `${n2(r.latency.p50_ms)} / ${n2(r.latency.p99_ms)} / ${n2(r.latency.p999_ms)} / ${n1(r.latency.max_ms)}`;
  return `${n0(r.msgs_per_s)}${r.truncated ? '*' : ''}`;
}

/** The machine and what it can do at most: disk with fsync, loopback TCP, a cold start. */
function machine_section(report: Report): string[] {
  const m = report.machine;
  const limits = report.limits;
  const lines = [`# Benchmark report`, ''];
  lines.push(`Run ${report.started_at}, profile \`${report.profile}\`: \`${report.command}\``, '');
  lines.push(
    `Machine: ${String(m.cpu_model)}, ${String(m.cores)} cores, ${String(m.memory_gib)} GiB, ${String(m.kernel)}, ` +
      `Node ${String(m.node)}, data on ${String(m.filesystem)}.`,
    '',
  );
  lines.push("## The machine's own limits (same run)", '');
  lines.push('| limit | value |', '| --- | ---: |');
  lines.push(
    `| fsync'd sequential write, 16 KiB per fdatasync | ${n1(limits.disk_16k_each_mb_s)} MB/s ` +
      `(${n0(limits.fsyncs_per_s)} fsyncs/s) |`,
  );
  lines.push(`| fsync'd sequential write, 1 MiB per fdatasync | ${n1(limits.disk_1m_per_fsync_mb_s)} MB/s |`);
  lines.push(`| loopback TCP, one connection | ${n1(limits.loopback_mb_s)} MB/s |`);
  if (report.cold_start_ms !== null) lines.push(`| Sluice cold start to \`ready\` | ${n0(report.cold_start_ms)} ms |`);
  lines.push('');
  return lines;
}

const SYSTEM_COLUMNS = [
  'system',
  'publish 100 B msg/s',
  'publish 1 KiB msg/s',
  'publish+consume 100 B msg/s',
  'drain 100 B msg/s',
  'queue (4 consumers, per-message ack) msg/s',
  'latency p50 / p99 / p99.9 / max ms',
  'broker CPU µs/msg (publish 100 B)',
  'client CPU µs/msg (publish 100 B)',
  'peak RSS MiB',
];

/** One row of a durability class's table: each workload's figure for one system. */
function system_row(results: WorkloadResult[], s: WorkloadResult): string {
  const mine = results.filter((r) => r.system === s.system);
  const pub = mine.find(
    (r) => r.workload === 'publish' && r.payload_bytes === 100 && r.partitions === 1 && r.producers === 1,
  );
  const rss = Math.max(...mine.map((r) => r.peak_rss_mib));
  const cells = [
    s.label,
    cell(results, s.system, 'publish', 100),
    cell(results, s.system, 'publish', 1024),
    cell(results, s.system, 'publish_consume', 100),
    cell(results, s.system, 'drain', 100),
    cell(results, s.system, 'queue', 100),
    cell(results, s.system, 'latency', 100),
    pub && !pub.error ? n2(pub.cpu_us_per_msg) : '–',
    pub && !pub.error ? n2(pub.client_cpu_us_per_msg) : '–',
    Number.isFinite(rss) ? n0(rss) : '–',
  ];
  return `| ${cells.join(' | ')} |`;
}

/** A table per durability class, with a line per system saying how it was set up. */
function class_sections(report: Report): string[] {
  const lines: string[] = [];
  const systems = [...new Map(report.results.map((r) => [r.system, r])).values()];
  for (const durability of ['fsync', 'periodic', 'none'] as const) {
    const group = systems.filter((s) => s.durability === durability);
    if (group.length === 0) continue;
    lines.push(`## ${CLASS_TITLES[durability]}`, '');
    lines.push(`| ${SYSTEM_COLUMNS.join(' | ')} |`);
    lines.push(`| --- |${' ---: |'.repeat(SYSTEM_COLUMNS.length - 1)}`);
    for (const s of group) lines.push(system_row(report.results, s));
    lines.push('');
    for (const s of group) lines.push(`- **${s.label}** (client: ${s.client}): ${s.durability_detail}`);
    lines.push('');
  }
  return lines;
}

/** The runs with more than one partition or producer. */
function sweep_section(report: Report): string[] {
  const sweeps = report.results.filter((r) => r.partitions !== 1 || r.producers !== 1);
  if (sweeps.length === 0) return [];
  const lines = ['## Partitions and producers', ''];
  lines.push(
    '| system | payload | partitions | producers | msg/s | MB/s | broker CPU µs/msg | client CPU µs/msg |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const r of sweeps) {
    const figures = r.error
      ? ['n/a', '', '', '']
      : [n0(r.msgs_per_s), n1(r.mb_per_s), n2(r.cpu_us_per_msg), n2(r.client_cpu_us_per_msg)];
    lines.push(`| ${[r.label, `${r.payload_bytes} B`, r.partitions, r.producers, ...figures].join(' | ')} |`);
  }
  lines.push('');
  return lines;
}

/** The client-library section's columns: the header, then the workload each shows. */
const CLIENT_COLUMNS: Array<[string, WorkloadResult['workload']]> = [
  ['publish 100 B, 1,000 per send ×4 msg/s (client µs/msg)', 'publish'],
  ['one message per send, 2,000 unresolved', 'publish_single'],
  ['drain eachBatch', 'drain'],
  ['drain eachMessage', 'drain_each'],
];

/** "rate (client µs)" of a system's single-partition, single-producer 100-B run of a workload. */
function client_cell(results: WorkloadResult[], system: string, workload: WorkloadResult['workload']): string {
  const r = results.find(
    (x) =>
      x.system === system &&
      x.workload === workload &&
      x.payload_bytes === 100 &&
      x.partitions === 1 &&
      x.producers === 1,
  );
  if (!r) return '–';
  if (r.error) return `n/a (${r.error.split('\n')[0]!.slice(0, 40)})`;
  return `${n0(r.msgs_per_s)}${r.truncated ? '*' : ''} (${n2(r.client_cpu_us_per_msg)} µs)`;
}

/** The Sluice clients (fsync policy) side by side, each figure with the client's CPU per message. */
function client_section(report: Report): string[] {
  const sluice = report.results.filter(
    (r) =>
      r.system.startsWith('sluice-') &&
      r.durability === 'fsync' &&
      CLIENT_COLUMNS.some(([, workload]) => workload === r.workload) &&
      r.payload_bytes === 100 &&
      r.partitions === 1 &&
      r.producers === 1,
  );
  if (sluice.length === 0) return [];
  const systems = [...new Map(sluice.map((r) => [r.system, r.label])).entries()];
  const lines = ['## Client libraries on one Sluice broker', ''];
  lines.push(`| system | ${CLIENT_COLUMNS.map(([header]) => header).join(' | ')} |`);
  lines.push(`| --- |${' ---: |'.repeat(CLIENT_COLUMNS.length)}`);
  for (const [system, label] of systems) {
    const cells = CLIENT_COLUMNS.map(([, workload]) => client_cell(report.results, system, workload));
    lines.push(`| ${[label, ...cells].join(' | ')} |`);
  }
  lines.push('', CLIENT_NOTE, '');
  return lines;
}

const CLIENT_NOTE =
  'Each cell: msg/s (client CPU µs per message), 100-B messages, one partition, acks = all. Client CPU: the ' +
  'harness process (all threads) plus the children it reaped during the step (kcat), user + system, over the ' +
  "timed part only (a drain's backlog and kcat's message files are setup). The client libraries (kafkajs, SDK, " +
  '@platformatic/kafka) publish with send() calls of 1,000 messages, 4 in flight, or of one message, 2,000 ' +
  'unresolved; the lean client and kcat batch their own way. Drains consume a backlog written first (by the lean ' +
  "client; kcat's by kcat), the client libraries' group consumer with eachBatch or eachMessage " +
  "(@platformatic/kafka has only its per-message stream, used for both); the lean client's Fetch loop and kcat's " +
  'consumer count as eachBatch. `–`: the system has no such driver in the harness.';

const TRUNCATED_NOTE =
  '`*` the run reached its time limit before publishing (or, for the queue workload, consuming) every message; ' +
  'the rate covers what was acknowledged.';

const QUEUE_NOTE =
  'Queue: a backlog of 100-B messages on one queue (Sluice: a topic with 1 partition) written first, untimed; ' +
  'then 4 consumers in the harness process share it and acknowledge every message on its own, timed from the ' +
  'first message received to the last one acknowledged by the handlers. `–`: the system has no queue driver in ' +
  'the harness.';

export function markdown(report: Report): string {
  const lines = [
    ...machine_section(report),
    ...class_sections(report),
    ...client_section(report),
    ...sweep_section(report),
  ];
  lines.push(TRUNCATED_NOTE, '');
  if (report.results.some((r) => r.workload === 'queue')) lines.push(QUEUE_NOTE, '');
  if (report.unavailable.length > 0) {
    lines.push('## Not run', '');
    for (const u of report.unavailable) lines.push(`- ${u.label}: ${u.reason}`);
    lines.push('');
  }
  lines.push('## Targets', '');
  lines.push('| target | measured | verdict | note |', '| --- | --- | --- | --- |');
  for (const t of report.targets) {
    const verdict = t.met === null ? 'not measured' : t.met ? 'met' : '**missed**';
    lines.push(`| ${t.target} | ${t.measured} | ${verdict} | ${t.note} |`);
  }
  lines.push('');
  return lines.join('\n');
}

/** Two bar charts side by side: publish 100 B msg/s and latency p99 ms, one bar per system. */
export function svg_chart(report: Report): string {
  const publish = report.results.filter(
    (r) => r.workload === 'publish' && r.payload_bytes === 100 && r.partitions === 1 && r.producers === 1 && !r.error,
  );
  const latency = report.results.filter((r) => r.workload === 'latency' && r.latency && !r.error);
  const colors: Record<DurabilityClass, string> = { fsync: '#2b6cb0', periodic: '#d69e2e', none: '#a0aec0' };
  const width = 1000;
  const row_height = 26;
  const rows = Math.max(publish.length, latency.length, 1);
  const height = 90 + rows * row_height;
  const parts: string[] = [];
  const font = 'font-family="sans-serif" font-size="12"';
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ${font}>`);
  parts.push(`<rect width="100%" height="100%" fill="white"/>`);
  const panel = (
    x0: number,
    title: string,
    items: Array<{ label: string; value: number; text: string; durability: DurabilityClass }>,
  ) => {
    parts.push(`<text x="${x0}" y="24" font-size="15" font-weight="bold">${title}</text>`);
    const max = Math.max(...items.map((i) => i.value), 1e-9);
    items.forEach((item, i) => {
      const y = 50 + i * row_height;
      const bar = (item.value / max) * 200;
      parts.push(`<text x="${x0}" y="${y + 14}">${escape(item.label)}</text>`);
      parts.push(
        `<rect x="${x0 + 190}" y="${y}" width="${bar.toFixed(1)}" height="18" fill="${colors[item.durability]}"/>`,
      );
      parts.push(`<text x="${x0 + 195 + bar}" y="${y + 14}">${item.text}</text>`);
    });
  };
  panel(
    10,
    'Publish, 100 B messages (msg/s)',
    publish.map((r) => ({ label: r.label, value: r.msgs_per_s, text: n0(r.msgs_per_s), durability: r.durability })),
  );
  panel(
    510,
    'End-to-end latency p99 (ms, lower is better)',
    latency.map((r) => ({
      label: r.label,
      value: r.latency!.p99_ms,
      text: n2(r.latency!.p99_ms),
      durability: r.durability,
    })),
  );
  const legend_y = height - 14;
  (['fsync', 'periodic', 'none'] as const).forEach((d, i) => {
    parts.push(`<rect x="${10 + i * 230}" y="${legend_y - 10}" width="12" height="12" fill="${colors[d]}"/>`);
    parts.push(`<text x="${28 + i * 230}" y="${legend_y}">${CLASS_TITLES[d].split(';')[0]}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
