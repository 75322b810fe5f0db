// The fault suite's network lab: hosts in their own namespaces reach each other by address, a
// partition really cuts the traffic between two groups (a connection attempt times out) and
// healing restores it, a degraded host really sends slowly and loses packets, and nothing of the
// lab is left afterwards. Needs root, iproute2 and nftables; skipped without them on a laptop, a
// failure under CI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { NetworkLab, network_missing, sweep } from '../../faults/net.ts';
import { connect_from } from '../support/lab_probe.ts';

const missing = await network_missing();
if (missing && process.env.CI === 'true') throw new Error(`the network lab cannot run under CI: ${missing}`);

/** Lab number of this test file: its own names and addresses. */
const LAB = 201;
const PORT = 7700;
const SERVER = `require('net').createServer((s) => s.end()).listen(${PORT}, '0.0.0.0', () => console.log('listening'))`;
const SINK_PORT = 7701;
/** On b: a TCP sink and a UDP counter; it prints the datagrams it got when its input closes. */
const SINK =
  `let got = 0; const d = require('dgram').createSocket('udp4'); d.on('message', () => got++);` +
  `d.bind(${SINK_PORT}, '0.0.0.0');` +
  `require('net').createServer((s) => s.resume()).listen(${SINK_PORT}, '0.0.0.0', () => console.log('listening'));` +
  `process.stdin.on('end', () => { console.log(got); process.exit(0); }); process.stdin.resume();`;

/** Runs `script` (node -e) on a lab host; resolves with what it printed. */
function run_on(lab: NetworkLab, host: string, script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = lab.spawn(host, process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', () => resolve(out.trim()));
  });
}

/** Milliseconds host `from` takes to send `bytes` over TCP to `to`'s sink. */
async function send_ms(lab: NetworkLab, from: string, to: string, bytes: number): Promise<number> {
  const script =
    `const t = Date.now(); const s = require('net').connect(${SINK_PORT}, '${to}');` +
    `s.on('error', () => console.log(-1)); s.end(Buffer.alloc(${bytes}));` +
    `s.on('close', (failed) => failed || console.log(Date.now() - t));`;
  return Number(await run_on(lab, from, script));
}

/** Sends `count` datagrams from `from` to `to`'s counter, one a millisecond. */
function send_datagrams(lab: NetworkLab, from: string, to: string, count: number): Promise<string> {
  const script =
    `const d = require('dgram').createSocket('udp4'); let n = 0;` +
    `const t = setInterval(() => { d.send(Buffer.alloc(64), ${SINK_PORT}, '${to}');` +
    `if (++n === ${count}) { clearInterval(t); setTimeout(() => d.close(), 200); } }, 1);`;
  return run_on(lab, from, script);
}

test(
  'network lab: hosts talk by address; partitions and bridges cut them apart; heal and slow, lossy links work',
  {
    skip: missing ?? false,
    timeout: 60_000,
  },
  async (t) => {
    await sweep();
    const lab = await NetworkLab.create(LAB, ['a', 'b', 'c']);
    const server = lab.spawn('b', process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) => server.stdout!.once('data', () => resolve()));
      const b = lab.host('b').address;
      assert.equal((await connect_from(lab, 'a', b, PORT, 2000)).result, 'ok');
      assert.equal(
        (await connect_from(lab, 'a', '127.0.0.1', PORT, 500)).result,
        'ECONNREFUSED',
        "b's server is not on a's loopback",
      );

      await lab.partition([['a'], ['b', 'c']]);
      assert.equal(
        (await connect_from(lab, 'a', b, PORT, 1000)).result,
        'timeout',
        'a cannot reach b across the partition',
      );
      assert.equal((await connect_from(lab, 'c', b, PORT, 2000)).result, 'ok', "c, on b's side, still can");

      await lab.heal();
      assert.equal((await connect_from(lab, 'a', b, PORT, 2000)).result, 'ok', 'healed');

      // A bridge: a and b cut apart, both still reaching c (c's server answers on the same port).
      const c = lab.host('c').address;
      const c_server = lab.spawn('c', process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((resolve) => c_server.stdout!.once('data', () => resolve()));
      try {
        await lab.cut([['a', 'b']]);
        assert.equal(
          (await connect_from(lab, 'a', b, PORT, 1000)).result,
          'timeout',
          'a cannot reach b across the cut',
        );
        assert.equal((await connect_from(lab, 'a', c, PORT, 2000)).result, 'ok', 'a still reaches c, the bridge');
        assert.equal((await connect_from(lab, 'c', b, PORT, 2000)).result, 'ok', 'and c reaches b');
        await lab.heal();
      } finally {
        c_server.kill();
      }

      // A degraded a: 192 KiB at 1 Mbit/s take about 1.5 s (a few ms when healthy); 30% of what it
      // sends is lost (of 400 datagrams, 200 to 360 arrive: the odds of leaving that are below 1e-15).
      const sink = lab.spawn('b', process.execPath, ['-e', SINK], { stdio: ['pipe', 'pipe', 'inherit'] });
      await new Promise<void>((resolve) => sink.stdout!.once('data', () => resolve()));
      const healthy_ms = await send_ms(lab, 'a', b, 192 * 1024);
      await lab.degrade('a', { rate_kbit: 1024, latency_ms: 400, loss_percent: 0 });
      const slow_ms = await send_ms(lab, 'a', b, 192 * 1024);
      t.diagnostic(`192 KiB from a to b: ${healthy_ms} ms healthy, ${slow_ms} ms degraded to 1 Mbit/s`);
      assert.ok(
        healthy_ms > 0 && slow_ms >= 1000 && slow_ms > 5 * healthy_ms,
        `degraded: ${slow_ms} ms, healthy: ${healthy_ms} ms`,
      );
      await lab.degrade('a', { rate_kbit: 100_000, latency_ms: 400, loss_percent: 30 });
      await send_datagrams(lab, 'a', b, 400);
      await lab.heal();
      const healed_ms = await send_ms(lab, 'a', b, 192 * 1024);
      assert.ok(healed_ms > 0 && healed_ms < slow_ms / 5, `healed, a sends at full speed again (${healed_ms} ms)`);
      sink.stdin!.end();
      const arrived = Number(
        await new Promise<string>((resolve) => sink.stdout!.once('data', (d: Buffer) => resolve(d.toString()))),
      );
      t.diagnostic(`400 datagrams sent with 30% loss: ${arrived} arrived`);
      assert.ok(arrived >= 200 && arrived <= 360, `${arrived} of 400 arrived`);
    } finally {
      server.kill();
      await lab.destroy();
    }
    const namespaces = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
    assert.ok(!namespaces.includes(`slf-${LAB}-`), `left behind: ${namespaces}`);
    assert.ok(!execFileSync('ip', ['link'], { encoding: 'utf8' }).includes(`slfbr${LAB}`), 'the bridge is gone');
  },
);
