// The Kafka front end on produce requests it must refuse, seen through a raw TCP client: corrupt and
// oversized batches, invalid batches, acks and partitions, and topics that do not exist while
// auto-creation is off. A refused request appends nothing; after every case the canary connection
// must still get answers and the records acknowledged before must still be readable.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/kafka/error_codes.ts';
import { PRODUCE } from '../../../src/protocol/kafka/messages/00_produce.ts';
import { FETCH } from '../../../src/protocol/kafka/messages/01_fetch.ts';
import { METADATA } from '../../../src/protocol/kafka/messages/03_metadata.ts';
import { INIT_PRODUCER_ID } from '../../../src/protocol/kafka/messages/22_init_producer_id.ts';
import {
  V,
  bad_input_broker,
  create_topic,
  end_offset,
  fetch_body,
  fetch_values,
  metadata_body,
  only_partition,
  produce,
  records_of,
  type Row,
} from './support.ts';

// ---------------------------------------------------------------- 4. refused produce requests

const TOPIC = 'refused';
const SMALL = 'small-max';
const SMALL_MAX_BYTES = 200;

const broker = bad_input_broker(async ({ canary }) => {
  await create_topic(canary, TOPIC);
  await create_topic(canary, SMALL, { 'max.message.bytes': String(SMALL_MAX_BYTES) });
  assert.equal((await produce(canary, TOPIC, records_of(['kept-0', 'kept-1']))).error_code, 0);
});

async function assert_unchanged(topic: string, end: number, values: string[]): Promise<void> {
  assert.equal(await end_offset(broker.canary, topic), end, `${topic}: end offset unchanged`);
  const fetched = await fetch_values(broker.canary, topic);
  assert.equal(fetched.high_watermark, end);
  assert.deepEqual(fetched.values, values);
}

describe('4. refused produce requests append nothing: corrupt and oversized batches', () => {
  test('a flipped byte inside a batch is CORRUPT_MESSAGE', async () => {
    const client = await broker.connect();
    const batch = records_of(['corrupt-me-0', 'corrupt-me-1']);
    batch[batch.length - 3]! ^= 0x55; // inside the last record's value, covered by the CRC
    const row = await produce(client, TOPIC, batch);
    assert.equal(row.error_code, ErrorCode.CORRUPT_MESSAGE);
    assert.equal(row.base_offset, -1);
    await assert_unchanged(TOPIC, 2, ['kept-0', 'kept-1']);
    await broker.assert_healthy();
  });

  test('a corrupt CRC field itself is CORRUPT_MESSAGE', async () => {
    const client = await broker.connect();
    const batch = records_of(['crc']);
    batch[17]! ^= 0x01; // the stored CRC32C
    assert.equal((await produce(client, TOPIC, batch)).error_code, ErrorCode.CORRUPT_MESSAGE);
    await assert_unchanged(TOPIC, 2, ['kept-0', 'kept-1']);
  });

  test('a corrupt idempotent batch is CORRUPT_MESSAGE, not a duplicate or a sequence error', async () => {
    const client = await broker.connect();
    const init = await client.call(INIT_PRODUCER_ID, 4, { transactional_id: null, transaction_timeout_ms: 60_000 });
    assert.equal(init.error_code, 0);
    const idempotence = { producer_id: init.producer_id as number, producer_epoch: init.producer_epoch as number };
    const TOPIC_IDEMPOTENT = 'refused-idempotent';
    await create_topic(broker.canary, TOPIC_IDEMPOTENT);
    const first = await produce(client, TOPIC_IDEMPOTENT, records_of(['seq-0'], { ...idempotence, base_sequence: 0 }));
    assert.equal(first.error_code, 0);
    /** Flips a byte of the last record's value, sends the batch and returns the error code. */
    const produce_corrupted = async (batch: Buffer): Promise<unknown> => {
      batch[batch.length - 1]! ^= 0x55;
      return (await produce(client, TOPIC_IDEMPOTENT, batch)).error_code;
    };
    // A corrupted retry of the acknowledged batch (same producer, epoch and sequence).
    const retry = records_of(['seq-0'], { ...idempotence, base_sequence: 0 });
    assert.equal(await produce_corrupted(retry), ErrorCode.CORRUPT_MESSAGE, 'corrupted retry');
    // A corrupted batch with a sequence gap.
    const gap = records_of(['seq-5'], { ...idempotence, base_sequence: 5 });
    assert.equal(await produce_corrupted(gap), ErrorCode.CORRUPT_MESSAGE, 'corrupted batch with a gap');
    // A corrupted batch claiming an older epoch.
    const older_epoch = { ...idempotence, producer_epoch: idempotence.producer_epoch - 1, base_sequence: 1 };
    const old = records_of(['seq-1'], older_epoch);
    assert.equal(await produce_corrupted(old), ErrorCode.CORRUPT_MESSAGE, 'corrupted batch with an old epoch');
    await assert_unchanged(TOPIC_IDEMPOTENT, 1, ['seq-0']);
    // The producer carries on with the next sequence.
    const next = records_of(['seq-1'], { ...idempotence, base_sequence: 1 });
    assert.equal((await produce(client, TOPIC_IDEMPOTENT, next)).error_code, 0);
    await assert_unchanged(TOPIC_IDEMPOTENT, 2, ['seq-0', 'seq-1']);
    await broker.assert_healthy();
  });

  test('a batch larger than max.message.bytes is MESSAGE_TOO_LARGE', async () => {
    const client = await broker.connect();
    const big = records_of(['x'.repeat(SMALL_MAX_BYTES * 2)]);
    assert.ok(big.length > SMALL_MAX_BYTES);
    const row = await produce(client, SMALL, big);
    assert.equal(row.error_code, ErrorCode.MESSAGE_TOO_LARGE);
    await assert_unchanged(SMALL, 0, []);
    // A batch under the limit on the same topic is accepted.
    const small = records_of(['fits']);
    assert.ok(small.length <= SMALL_MAX_BYTES);
    assert.equal((await produce(client, SMALL, small)).error_code, 0);
    await assert_unchanged(SMALL, 1, ['fits']);
    await broker.assert_healthy();
  });
});

describe('4. refused produce requests append nothing: invalid batches, acks and partitions', () => {
  test('two batches in one partition are INVALID_RECORD', async () => {
    const client = await broker.connect();
    const row = await produce(client, TOPIC, Buffer.concat([records_of(['two-0']), records_of(['two-1'])]));
    assert.equal(row.error_code, ErrorCode.INVALID_RECORD);
    await assert_unchanged(TOPIC, 2, ['kept-0', 'kept-1']);
    await broker.assert_healthy();
  });

  test('acks=5 is INVALID_REQUIRED_ACKS', async () => {
    const client = await broker.connect();
    const row = await produce(client, TOPIC, records_of(['acks-5']), { acks: 5 });
    assert.equal(row.error_code, ErrorCode.INVALID_REQUIRED_ACKS);
    await assert_unchanged(TOPIC, 2, ['kept-0', 'kept-1']);
    await broker.assert_healthy();
  });

  test('null records, a few garbage bytes, a wrong magic and a cut batch are refused', async () => {
    const client = await broker.connect();
    assert.equal((await produce(client, TOPIC, null)).error_code, ErrorCode.INVALID_RECORD);
    const garbage = (await produce(client, TOPIC, Buffer.from('not a batch'))).error_code;
    assert.ok(garbage === ErrorCode.INVALID_RECORD || garbage === ErrorCode.CORRUPT_MESSAGE, `garbage: ${garbage}`);
    const magic = records_of(['magic']);
    magic[16] = 1;
    const magic_code = (await produce(client, TOPIC, magic)).error_code;
    assert.ok(
      magic_code === ErrorCode.INVALID_RECORD || magic_code === ErrorCode.CORRUPT_MESSAGE,
      `magic: ${magic_code}`,
    );
    const whole = records_of(['cut-0', 'cut-1']);
    const cut_code = (await produce(client, TOPIC, whole.subarray(0, whole.length - 4))).error_code;
    assert.ok(cut_code === ErrorCode.INVALID_RECORD || cut_code === ErrorCode.CORRUPT_MESSAGE, `cut: ${cut_code}`);
    await assert_unchanged(TOPIC, 2, ['kept-0', 'kept-1']);
    await broker.assert_healthy();
  });

  test('an unknown partition is UNKNOWN_TOPIC_OR_PARTITION', async () => {
    const client = await broker.connect();
    for (const partition of [1, -1]) {
      const row = await produce(client, TOPIC, records_of(['elsewhere']), { partition });
      assert.equal(row.error_code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `partition ${partition}`);
    }
    await assert_unchanged(TOPIC, 2, ['kept-0', 'kept-1']);
  });

  test('a refused batch does not disturb a good one in the same request', async () => {
    const client = await broker.connect();
    const bad = records_of(['bad']);
    bad[bad.length - 1]! ^= 0xff;
    const body = {
      transactional_id: null,
      acks: -1,
      timeout_ms: 5_000,
      topic_data: [
        { name: TOPIC, partition_data: [{ index: 0, records: bad }] },
        { name: SMALL, partition_data: [{ index: 0, records: records_of(['good']) }] },
      ],
    };
    const response = await client.call(PRODUCE, V.produce, body);
    const [first, second] = response.responses as Row[];
    assert.equal((first!.partition_responses as Row[])[0]!.error_code, ErrorCode.CORRUPT_MESSAGE);
    assert.equal((second!.partition_responses as Row[])[0]!.error_code, 0);
    await assert_unchanged(TOPIC, 2, ['kept-0', 'kept-1']);
    await assert_unchanged(SMALL, 2, ['fits', 'good']);
    await broker.assert_healthy();
  });
});

// ---------------------------------------------------------------- 5. no auto-creation

test('5. produce and metadata for a missing topic with auto-creation off', async () => {
  const strict = await broker.start_other('bad-input-no-auto', { auto_create_topics: false });
  try {
    const client = await broker.connect(strict);
    const strict_canary = await broker.connect(strict);
    const row = await produce(client, 'missing', records_of(['lost']));
    assert.equal(row.error_code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const metadata = await client.call(METADATA, V.metadata, metadata_body(['missing'], true));
    const [topic] = metadata.topics as Row[];
    assert.equal(topic!.name, 'missing');
    assert.equal(topic!.error_code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    // Metadata v1 (where auto-creation is implied) does not create it either.
    const old = await client.call(METADATA, 1, metadata_body(['missing']));
    assert.equal((old.topics as Row[])[0]!.error_code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(strict.broker.topics.get('missing'), undefined);
    const all = await strict_canary.call(METADATA, V.metadata, metadata_body(null));
    assert.ok(!(all.topics as Row[]).some((t) => t.name === 'missing'), 'the topic was not created');
    const response = await strict_canary.call(FETCH, V.fetch, fetch_body('missing', 0));
    const fetched = only_partition(response, 'responses', 'partitions');
    assert.equal(fetched.error_code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    // An explicitly created topic works on the same broker.
    await create_topic(strict_canary, 'present');
    assert.equal((await produce(client, 'present', records_of(['here']))).error_code, 0);
    assert.deepEqual((await fetch_values(strict_canary, 'present')).values, ['here']);
  } finally {
    await strict.close();
  }
  await broker.assert_healthy();
});
