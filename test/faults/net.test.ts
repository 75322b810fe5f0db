// The fault suite's network lab: hosts in their own namespaces reach each other by address, a
// partition really cuts the traffic between two groups (a connection attempt times out) and
// healing restores it, added delay really delays (where the kernel has netem), and nothing of the
// lab is left afterwards. Needs root, iproute2 and nftables; skipped without them on a laptop, a
// failure under CI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { NetworkLab, netem_missing, network_missing, sweep } from '../../faults/net.ts';
import { connect_from } from '../support/lab_probe.ts';

const missing = await network_missing();
if (missing && process.env.CI === 'true') throw new Error(`the network lab cannot run under CI: ${missing}`);

/** Lab number of this test file: its own names and addresses. */
const LAB = 201;
const PORT = 7700;
const SERVER = `require('net').createServer((s) => s.end()).listen(${PORT}, '0.0.0.0', () => console.log('listening'))`;

test(
  'network lab: hosts talk by address; partitions and bridges cut them apart; heal and delay work; nothing is left',
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

      const no_netem = await netem_missing();
      if (no_netem) t.diagnostic(`delay and loss not checked: ${no_netem}`);
      else {
        await lab.shape('a', 300);
        const delayed = await connect_from(lab, 'a', b, PORT, 3000);
        assert.equal(delayed.result, 'ok');
        assert.ok(delayed.ms >= 250, `connect took ${delayed.ms} ms with 300 ms of delay on a`);
      }
    } finally {
      server.kill();
      await lab.destroy();
    }
    const namespaces = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
    assert.ok(!namespaces.includes(`slf-${LAB}-`), `left behind: ${namespaces}`);
    assert.ok(!execFileSync('ip', ['link'], { encoding: 'utf8' }).includes(`slfbr${LAB}`), 'the bridge is gone');
  },
);
