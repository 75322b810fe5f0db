// A broker process whose disk misdirects a write (reports success, puts the bytes elsewhere): the
// read-back after the write sees it, and the process must stop instead of acknowledging. Run by
// test/invariants.test.ts; prints "acknowledged" if the produce was answered, which it must not be.
import pino from 'pino';
import { open_core } from '../../src/compose/start_broker.ts';
import { stop_on_uncaught_errors } from '../../src/core/invariants.ts';
import { encode_record_batch } from '../../src/protocol/record_batch.ts';
import { SimFileIO } from '../../src/storage/index.ts';

const logger = pino({ level: 'info' }, pino.destination(2));
stop_on_uncaught_errors(logger);
const io = new SimFileIO();
const core = await open_core({ data_dir: '/sim/data', io, logger });
await core.topics.create('orders', 1, {});
io.inject({ op: 'writev', path_includes: 'orders-0', code: 'EIO', misdirect_bytes: 4096 });
const answered = await core.partitions.produce(
  'orders',
  0,
  encode_record_batch([{ key: null, value: Buffer.from('x'), timestamp_ms: Date.now() }]),
  -1,
);
process.stdout.write(`acknowledged ${answered.base_offset}\n`);
