// The faults the suite injects, each on a running lab cluster: `start` does the harm and returns
// what it did (for the run's log and for the tests that check each fault had its effect), `heal`
// undoes it. Faults on files (a corrupt batch, a cut tail, lost unflushed writes) happen while the
// broker is down: it is killed, its files are changed, and healing restarts it on them.
import fs from 'node:fs';
import path from 'node:path';
import type { LabCluster } from './lab_cluster.ts';
import type { Degradation } from './net.ts';
import { TOPIC } from './workload.ts';

export interface Injected {
  /** What was done, for the run's log. */
  what: string;
  /** For network faults: the links cut (host names, both ways). */
  links?: (readonly [string, string])[];
  /** For a degraded link: the host whose sending is throttled and lossy, and how. */
  degraded?: { host: string } & Degradation;
  /** For clock faults: the broker, and how wrong its clock was at most after `held_ms`. */
  clock?: { node_id: number; error_ms(held_ms: number): number };
  heal(): Promise<void>;
}

export type Random = () => number;

export interface Nemesis {
  name: string;
  /** How long the fault is held before it is healed. */
  hold_ms: number;
  start(cluster: LabCluster, next: Random): Promise<Injected>;
}

const pick = <T>(items: readonly T[], next: Random): T => items[Math.floor(next() * items.length)]!;
const shuffled = <T>(items: readonly T[], next: Random): T[] =>
  items
    .map((item) => [next(), item] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([, item]) => item);
const hosts = (cluster: LabCluster) => [...cluster.brokers.values()].map((b) => b.host);
const node_of = (host: string) => Number(host.slice(1));

// ------------------------------------------------------------------------------ processes

const kill: Nemesis = {
  name: 'kill',
  hold_ms: 2000,
  async start(cluster, next) {
    const node_id = node_of(pick(hosts(cluster), next));
    await cluster.kill(node_id);
    return { what: `kill -9 broker ${node_id}`, heal: () => cluster.start_broker(node_id) };
  },
};

const pause = (lease_ttl_ms: number): Nemesis => ({
  name: 'pause',
  hold_ms: lease_ttl_ms + 1500,
  async start(cluster, next) {
    const node_id = node_of(pick(hosts(cluster), next));
    cluster.pause(node_id);
    return { what: `SIGSTOP broker ${node_id}`, heal: async () => cluster.resume(node_id) };
  },
});

// ------------------------------------------------------------------------------ network

/** Every link between two groups. */
const across = (a: readonly string[], b: readonly string[]) => a.flatMap((x) => b.map((y) => [x, y] as const));

/** Cuts `links` (the lab drops their packets both ways) until healed. */
async function cut(cluster: LabCluster, what: string, links: (readonly [string, string])[]): Promise<Injected> {
  await cluster.lab.cut(links);
  return { what, links, heal: () => cluster.lab.heal() };
}

/** One broker cut off from the other brokers and etcd. */
const isolate: Nemesis = {
  name: 'isolate',
  hold_ms: 4000,
  async start(cluster, next) {
    const host = pick(hosts(cluster), next);
    return cut(cluster, `isolate ${host}`, across([host], ['etcd', ...hosts(cluster).filter((h) => h !== host)]));
  },
};

/** Brokers split into a minority and a majority, etcd on a random side. */
const split: Nemesis = {
  name: 'split',
  hold_ms: 4000,
  async start(cluster, next) {
    const [minority, ...majority] = shuffled(hosts(cluster), next);
    const [a, b] = next() < 0.5 ? [[minority!, 'etcd'], majority] : [[minority!], [...majority, 'etcd']];
    return cut(cluster, `split ${a!.join('+')} | ${b!.join('+')}`, across(a!, b!));
  },
};

/** Two brokers cut apart while both still reach the third (the bridge) and etcd. */
const bridge: Nemesis = {
  name: 'bridge',
  hold_ms: 4000,
  async start(cluster, next) {
    const [a, b, via] = shuffled(hosts(cluster), next);
    return cut(cluster, `bridge ${a} | ${b} through ${via}`, [[a!, b!]]);
  },
};

/** etcd unreachable from one or two brokers, which still reach each other. */
const etcd_cut: Nemesis = {
  name: 'etcd_cut',
  hold_ms: 4000,
  async start(cluster, next) {
    const chosen = shuffled(hosts(cluster), next).slice(0, next() < 0.5 ? 1 : 2);
    return cut(cluster, `etcd cut from ${chosen.join(', ')}`, across(chosen, ['etcd']));
  },
};

/** One broker's sending throttled and lossy: a slow, flaky link rather than none. */
const degrade: Nemesis = {
  name: 'degrade',
  hold_ms: 5000,
  async start(cluster, next) {
    const host = pick(hosts(cluster), next);
    const how: Degradation = {
      rate_kbit: pick([256, 1024, 4096], next),
      latency_ms: 50 + Math.round(next() * 350),
      loss_percent: 1 + Math.round(next() * 19),
    };
    await cluster.lab.degrade(host, how);
    return {
      what: `degrade ${host}: ${how.rate_kbit} kbit/s, queued up to ${how.latency_ms} ms, ${how.loss_percent}% lost`,
      degraded: { host, ...how },
      heal: () => cluster.lab.heal(),
    };
  },
};

// ------------------------------------------------------------------------------ clock

/** libfaketime's offset syntax: a sign always. */
const signed = (value: number | string) => (String(value).startsWith('-') ? String(value) : `+${value}`);

/** How often a drifting clock's offset is moved on (libfaketime reads its file every 2 s). */
const DRIFT_STEP_MS = 250;

/**
 * One broker's wall clock stepped by up to two minutes either way, or running fast or slow. Drift
 * is a staircase of small offsets rather than libfaketime's rate setting: a rate set while the
 * process runs jumps its clock by the time since the process started, and setting the offset
 * back leaves the rate running.
 */
const clock: Nemesis = {
  name: 'clock',
  hold_ms: 5000,
  async start(cluster, next) {
    const broker = cluster.brokers.get(node_of(pick(hosts(cluster), next)))!;
    const step_s = Math.round((next() * 2 - 1) * 120);
    const rate = next() < 0.7 ? 1 : Number((0.5 + next() * 1.5).toFixed(2));
    // Written aside and renamed: libfaketime reading the file mid-write would see it empty.
    const set = (offset_s: number) => {
      fs.writeFileSync(`${broker.clock_file}.next`, `${signed(offset_s.toFixed(3))}\n`);
      fs.renameSync(`${broker.clock_file}.next`, broker.clock_file);
    };
    const started_ms = Date.now();
    let drifting: NodeJS.Timeout | undefined;
    if (rate === 1) set(step_s);
    else drifting = setInterval(() => set(((rate - 1) * (Date.now() - started_ms)) / 1000), DRIFT_STEP_MS);
    const error_ms = (held_ms: number) => (rate === 1 ? Math.abs(step_s) * 1000 : Math.abs(rate - 1) * held_ms);
    return {
      what: `clock of broker ${broker.node_id} ${rate === 1 ? `set to ${signed(step_s)}` : `running x${rate}`}`,
      clock: { node_id: broker.node_id, error_ms },
      heal: async () => {
        clearInterval(drifting);
        set(0);
      },
    };
  },
};

// ------------------------------------------------------------------------------ disk

const BALLAST = 'ballast';

/** Fills the filesystem holding `dir` with a ballast file; returns the bytes written. */
export function fill_disk(dir: string): number {
  const fd = fs.openSync(path.join(dir, BALLAST), 'w');
  let written = 0;
  try {
    for (const chunk of [1 << 20, 4096, 1]) {
      const bytes = Buffer.alloc(chunk);
      for (;;) {
        try {
          written += fs.writeSync(fd, bytes);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
          break;
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return written;
}

const full_disk: Nemesis = {
  name: 'full_disk',
  hold_ms: 4000,
  async start(cluster, next) {
    const broker = cluster.brokers.get(node_of(pick(hosts(cluster), next)))!;
    const bytes = fill_disk(broker.data_dir);
    return {
      what: `disk of broker ${broker.node_id} filled (${bytes} bytes of ballast)`,
      heal: async () => fs.rmSync(path.join(broker.data_dir, BALLAST), { force: true }),
    };
  },
};

// ------------------------------------------------------------------------------ files

/** The segment files of the fault topic's partitions in a data directory, newest last per partition. */
export function segment_files(data_dir: string, topic: string): string[][] {
  return fs
    .readdirSync(data_dir)
    .filter((name) => name.startsWith(`${topic}-`) && /^\d+$/.test(name.slice(topic.length + 1)))
    .sort()
    .map((partition) =>
      fs
        .readdirSync(path.join(data_dir, partition))
        .filter((name) => name.endsWith('.log'))
        .sort()
        .map((name) => path.join(data_dir, partition, name)),
    );
}

/** Start and length of each whole batch in a segment file. */
export function batches_in(file: Buffer): { at: number; bytes: number }[] {
  const out: { at: number; bytes: number }[] = [];
  for (let at = 0; at + 61 <= file.length;) {
    const bytes = file.readInt32BE(at + 8) + 12;
    if (bytes < 61 || at + bytes > file.length) break;
    out.push({ at, bytes });
    at += bytes;
  }
  return out;
}

/** Kills a broker, changes its files with `harm`, and restarts it on them when healed. */
const on_files = (name: string, harm: (data_dir: string, next: Random) => string): Nemesis => ({
  name,
  hold_ms: 1000,
  async start(cluster, next) {
    const broker = cluster.brokers.get(node_of(pick(hosts(cluster), next)))!;
    await cluster.kill(broker.node_id);
    const what = harm(broker.data_dir, next);
    return { what: `broker ${broker.node_id} killed; ${what}`, heal: () => cluster.start_broker(broker.node_id) };
  },
});

/** Bytes flipped in the middle of one batch of a partition's newest segment. */
export function corrupt_batch(data_dir: string, next: Random): string {
  const partitions = segment_files(data_dir, TOPIC).filter((files) => files.length > 0);
  if (partitions.length === 0) return 'no segment to corrupt';
  const file = pick(partitions, next).at(-1)!;
  const data = fs.readFileSync(file);
  const batches = batches_in(data);
  if (batches.length === 0) return `${path.basename(path.dirname(file))}: no whole batch to corrupt`;
  const batch = batches[Math.floor(batches.length * (0.5 + next() * 0.5))] ?? batches.at(-1)!;
  const at = batch.at + 61 + Math.floor(next() * (batch.bytes - 61));
  const fd = fs.openSync(file, 'r+');
  fs.writeSync(fd, Buffer.from([data[at]! ^ 0xff]), 0, 1, at);
  fs.closeSync(fd);
  const where = `batch at ${batch.at}, offset ${data.readBigInt64BE(batch.at)}`;
  return `byte ${at} of ${path.relative(data_dir, file)} flipped (${where})`;
}

/** A partition's newest segment cut to a random length in its second half (mid-batch, mostly). */
export function truncate_tail(data_dir: string, next: Random): string {
  const partitions = segment_files(data_dir, TOPIC).filter((files) => files.length > 0);
  if (partitions.length === 0) return 'no segment to truncate';
  const file = pick(partitions, next).at(-1)!;
  const bytes = fs.statSync(file).size;
  const kept = Math.floor(bytes * (0.5 + next() * 0.5));
  fs.truncateSync(file, kept);
  return `${path.relative(data_dir, file)} cut from ${bytes} to ${kept} bytes`;
}

/**
 * What a power cut takes when the page cache had not reached the disk: the newest segment of
 * every partition on the node loses 1 byte to 64 KiB of its tail. Sluice acknowledges only fsynced
 * writes, so this is more than a real cut could take; the cluster still holds other copies.
 */
export function lose_unflushed(data_dir: string, next: Random): string {
  const cuts: string[] = [];
  for (const files of segment_files(data_dir, TOPIC)) {
    const file = files.at(-1);
    if (!file) continue;
    const bytes = fs.statSync(file).size;
    const kept = Math.max(0, bytes - 1 - Math.floor(next() * 64 * 1024));
    fs.truncateSync(file, kept);
    cuts.push(`${path.basename(path.dirname(file))} −${bytes - kept}`);
  }
  return `unflushed tails lost: ${cuts.join(', ') || 'none'}`;
}

/** Every fault the suite knows, by name; `lease_ttl_ms` sizes the pause. */
/**
 * A fault's family: two faults injected at once are always of different families. The faults that
 * destroy data on a broker's disk are one family, so two disks are never damaged at once.
 */
export function fault_family(name: string): string {
  if (['isolate', 'split', 'bridge', 'etcd_cut', 'degrade'].includes(name)) return 'network';
  if (['corrupt', 'truncate', 'lost_writes'].includes(name)) return 'disk';
  return name;
}

export function nemeses(lease_ttl_ms: number): Nemesis[] {
  return [
    kill,
    pause(lease_ttl_ms),
    isolate,
    split,
    bridge,
    etcd_cut,
    degrade,
    clock,
    full_disk,
    on_files('corrupt', corrupt_batch),
    on_files('truncate', truncate_tail),
    on_files('lost_writes', lose_unflushed),
  ];
}
