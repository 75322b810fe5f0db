// A seconds-long run of the benchmark harness, so it keeps working: one system, its small smoke
// workloads (those it has a driver for), and every output file written. The figures themselves
// are not checked here, only that each was measured, with the client's CPU beside it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');

test('the benchmark harness runs end to end (smoke profile)', { timeout: 180_000 }, async () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-smoke-'));
  try {
    const { code, stderr } = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [
          '--import',
          'tsx',
          path.join(ROOT, 'bench', 'harness', 'run.ts'),
          '--profile',
          'smoke',
          '--systems',
          'sluice-lean-fsync',
          '--out',
          out,
        ],
        { cwd: ROOT, timeout: 170_000 },
        (error, _stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr }),
      );
    });
    assert.equal(code, 0, stderr);
    const report = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'));
    assert.deepEqual(
      report.results.map((r: { workload: string }) => r.workload),
      ['publish', 'drain', 'latency'],
    );
    for (const result of report.results) assert.equal(result.error, undefined, result.error);
    assert.ok(report.results[0].msgs_per_s > 0);
    assert.ok(report.results[0].client_cpu_us_per_msg > 0, 'client CPU per message measured');
    assert.ok(report.limits.disk_16k_each_mb_s > 0 && report.limits.loopback_mb_s > 0);
    assert.match(fs.readFileSync(path.join(out, 'report.md'), 'utf8'), /Acknowledged after fsync/);
    assert.match(fs.readFileSync(path.join(out, 'chart.svg'), 'utf8'), /^<svg/);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});
