// A preload for looking inside a broker during a benchmark run: times every fs.writev and
// fs.fdatasync callback, every garbage collection, and the event loop's delay, and writes their
// percentiles to `io-probe-<pid>.txt` in SLUICE_IO_PROBE_DIR (default: the system temp directory)
// when the process exits. Plain JavaScript so that it loads before the TypeScript loader does.
//
//   npm run bench -- --systems sluice-lean-fsync --workloads latency \
//     --broker-node-args="--import=./bench/harness/sluice/io_probe.mjs"
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PerformanceObserver, monitorEventLoopDelay, performance } from 'node:perf_hooks';

/** Samples kept per series; later ones are dropped (a benchmark step is bounded anyway). */
const SAMPLES_MAX = 1_000_000;
const series = new Map();

function record(name, ms) {
  let samples = series.get(name);
  if (!samples) series.set(name, (samples = []));
  if (samples.length < SAMPLES_MAX) samples.push(ms);
}

function time_callback_of(name) {
  const original = fs[name];
  fs[name] = function timed(...args) {
    const callback = args[args.length - 1];
    const started = performance.now();
    args[args.length - 1] = function done(...results) {
      record(name, performance.now() - started);
      return callback.apply(this, results);
    };
    return original.apply(this, args);
  };
}

time_callback_of('writev');
time_callback_of('fdatasync');
const GC_KINDS = { 1: 'gc minor', 2: 'gc major', 4: 'gc incremental', 8: 'gc weak callbacks' };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) record(GC_KINDS[entry.detail?.kind] ?? 'gc other', entry.duration);
}).observe({ entryTypes: ['gc'] });
const loop_delay = monitorEventLoopDelay({ resolution: 1 });
loop_delay.enable();

function line(name, samples) {
  const sorted = Float64Array.from(samples).sort();
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(3);
  const total = sorted.reduce((sum, ms) => sum + ms, 0);
  return (
    `${name.padEnd(18)} n ${String(sorted.length).padStart(7)}  ` +
    `p50 ${at(0.5)}  p90 ${at(0.9)}  p99 ${at(0.99)}  p99.9 ${at(0.999)}  max ${at(1)}  total ${total.toFixed(1)} ms`
  );
}

process.on('exit', () => {
  const ms = (ns) => (ns / 1e6).toFixed(3);
  const at = (percent) => ms(loop_delay.percentile(percent));
  const lines = [
    `event loop delay (1 ms resolution) p50 ${at(50)} p99 ${at(99)} p99.9 ${at(99.9)} max ${ms(loop_delay.max)}`,
  ];
  for (const [name, samples] of series) if (samples.length > 0) lines.push(line(name, samples));
  const dir = process.env.SLUICE_IO_PROBE_DIR ?? os.tmpdir();
  fs.writeFileSync(path.join(dir, `io-probe-${process.pid}.txt`), `${lines.join('\n')}\n`);
});
