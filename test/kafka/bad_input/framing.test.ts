// The Kafka front end on bad framing, seen through a raw TCP client: malformed size prefixes,
// truncated frame bodies, and requests split into single bytes. After every case the canary
// connection must still get answers and the records acknowledged before must still be readable.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { API_VERSIONS } from '../../../src/protocol/kafka/messages/18_api_versions.ts';
import { JOIN_GROUP } from '../../../src/protocol/kafka/messages/11_join_group.ts';
import { METADATA } from '../../../src/protocol/kafka/messages/03_metadata.ts';
import { PRODUCE } from '../../../src/protocol/kafka/messages/00_produce.ts';
import { decode_response, encode_request, frame, header_bytes, size_prefix, type RawClient } from './raw_client.ts';
import {
  REQUEST_BYTES_MAX,
  V,
  bad_input_broker,
  create_topic,
  fetch_values,
  metadata_body,
  only_partition,
  produce_body,
  records_of,
  type Row,
} from './support.ts';

const broker = bad_input_broker();

// ---------------------------------------------------------------- 1. malformed frames

describe('1. malformed size prefixes close the connection', () => {
  const sizes: Array<[string, number]> = [
    ['0', 0],
    ['-1', -1],
    ['2^31-1', 0x7fff_ffff],
    ['request_bytes_max + 1', REQUEST_BYTES_MAX + 1],
    ['-2^31', -0x8000_0000],
    ['9 (shorter than any header)', 9],
  ];
  for (const [name, size] of sizes) {
    test(`size ${name}`, async () => {
      const from = broker.log.length;
      const client = await broker.connect();
      // The prefix followed by a few bytes, as a client that believes its size would send.
      await client.write(Buffer.concat([size_prefix(size), Buffer.alloc(64, 0x41)]));
      await client.expect_closed_without_response(`size ${name}`);
      assert.ok(
        broker.close_reasons(from).some((reason) => reason.startsWith(`request size ${size} `)),
        `logged reason: ${broker.close_reasons(from).join('; ')}`,
      );
      await broker.assert_healthy();
    });
  }

  test('a size prefix above the limit arriving byte by byte', async () => {
    const client = await broker.connect();
    await client.write_bytewise(size_prefix(REQUEST_BYTES_MAX + 1));
    await client.expect_closed_without_response('split oversized prefix');
    await broker.assert_healthy();
  });

  test('a frame of exactly request_bytes_max is accepted as a frame (then refused as garbage)', async () => {
    // The limit is inclusive: the broker reads the whole frame, finds no valid header, closes.
    const from = broker.log.length;
    const client = await broker.connect();
    const body = Buffer.alloc(REQUEST_BYTES_MAX, 0xff);
    await client.write(Buffer.concat([size_prefix(REQUEST_BYTES_MAX), body]));
    await client.expect_closed_without_response('garbage frame at the limit');
    assert.ok(
      broker.close_reasons(from).some((reason) => !reason.startsWith('request size')),
      `logged reason: ${broker.close_reasons(from).join('; ')}`,
    );
    await broker.assert_healthy();
  });
});

// ---------------------------------------------------------------- 2. truncated frame bodies

/** Whole requests to send cut short, each named. */
function requests_to_cut(): Array<[string, Buffer]> {
  const join = {
    group_id: 'g',
    session_timeout_ms: 10_000,
    rebalance_timeout_ms: 5_000,
    member_id: '',
    group_instance_id: null,
    protocol_type: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from('m') }],
  };
  return [
    ['Produce', encode_request(PRODUCE, V.produce, 7, produce_body('truncated', records_of(['x'])))],
    ['Produce v3', encode_request(PRODUCE, 3, 7, produce_body('truncated', records_of(['x'])))],
    ['JoinGroup', encode_request(JOIN_GROUP, V.join_group, 7, join)],
  ];
}

describe('2. truncated frame bodies close the connection', () => {
  test('garbage header (all 0xff)', async () => {
    const client = await broker.connect();
    await client.write(frame(Buffer.alloc(20, 0xff)));
    await client.expect_closed_without_response('garbage header');
    await broker.assert_healthy();
  });

  test('client id length beyond the frame', async () => {
    const client = await broker.connect();
    const body = Buffer.alloc(12);
    body.writeInt16BE(API_VERSIONS.api_key, 0);
    body.writeInt16BE(0, 2);
    body.writeInt32BE(7, 4);
    body.writeInt16BE(100, 8); // client id of 100 bytes, 2 present
    await client.write(frame(body));
    await client.expect_closed_without_response('client id past the frame');
    await broker.assert_healthy();
  });

  test('flexible header whose tag section runs past the frame', async () => {
    const client = await broker.connect();
    const header = header_bytes(METADATA.api_key, V.metadata, 7, false);
    // one tag, number 0, claiming 50 bytes, 1 present
    await client.write(frame(Buffer.concat([header, Buffer.from([1, 0, 50, 0])])));
    await client.expect_closed_without_response('header tags past the frame');
    await broker.assert_healthy();
  });

  test('Metadata v1 body cut inside the topics array length', async () => {
    const client = await broker.connect();
    await client.write(frame(Buffer.concat([header_bytes(METADATA.api_key, 1, 7), Buffer.from([0, 0])])));
    await client.expect_closed_without_response('cut body');
    await broker.assert_healthy();
  });

  test('Metadata v1 with a hostile array length', async () => {
    const client = await broker.connect();
    const hostile = Buffer.from([0x7f, 0xff, 0xff, 0xff]);
    await client.write(frame(Buffer.concat([header_bytes(METADATA.api_key, 1, 7), hostile])));
    await client.expect_closed_without_response('hostile array length');
    await broker.assert_healthy();
  });

  test('Produce and JoinGroup requests cut at every length inside a correctly sized frame', async () => {
    for (const [name, request] of requests_to_cut()) {
      const body = request.subarray(4);
      // Every cut keeps at least 1 byte and drops at least 1 byte of the body.
      const clients_now: RawClient[] = [];
      for (let keep = 1; keep < body.length; keep++) {
        const client = await broker.connect();
        clients_now.push(client);
        await client.write(frame(body.subarray(0, keep)));
      }
      await Promise.all(
        clients_now.map((client, i) => client.expect_closed_without_response(`${name} cut to ${i + 1} bytes`)),
      );
    }
    const topics = await broker.canary.call(METADATA, V.metadata, metadata_body(null));
    assert.ok(!(topics.topics as Row[]).some((t) => t.name === 'truncated'), 'no truncated request was acted upon');
    await broker.assert_healthy();
  });

  test('a frame that never completes is dropped when the client closes its side', async () => {
    const client = await broker.connect();
    await client.write(Buffer.concat([size_prefix(100), Buffer.alloc(10, 1)]));
    client.end();
    await client.expect_closed_without_response('half-sent frame');
    await broker.assert_healthy();
  });
});

// ---------------------------------------------------------------- 8. one byte at a time

test('8. requests split into 1-byte writes are handled', async () => {
  const TOPIC = 'bytewise';
  await create_topic(broker.canary, TOPIC);
  const client = await broker.connect();
  const produce_id = client.correlation();
  const produce_request = produce_body(TOPIC, records_of(['byte-0', 'byte-1']));
  await client.write_bytewise(encode_request(PRODUCE, V.produce, produce_id, produce_request));
  const produced = decode_response(PRODUCE, V.produce, await client.next_frame(), produce_id);
  const row = only_partition(produced, 'responses', 'partition_responses');
  assert.equal(row.error_code, 0);
  assert.equal(row.base_offset, 0);

  const metadata_id = client.correlation();
  await client.write_bytewise(encode_request(METADATA, V.metadata, metadata_id, metadata_body([TOPIC])));
  const [topic] = decode_response(METADATA, V.metadata, await client.next_frame(), metadata_id).topics as Row[];
  assert.equal(topic!.error_code, 0);

  // Two requests whose boundary falls inside a write: the first and half of the second, then the rest.
  const a_id = client.correlation();
  const b_id = client.correlation();
  const both = Buffer.concat([
    encode_request(API_VERSIONS, 0, a_id, {}),
    encode_request(PRODUCE, V.produce, b_id, produce_body(TOPIC, records_of(['byte-2']))),
  ]);
  const cut = encode_request(API_VERSIONS, 0, a_id, {}).length + 9;
  await client.write(both.subarray(0, cut));
  await new Promise((resolve) => setTimeout(resolve, 20));
  await client.write(both.subarray(cut));
  assert.equal(decode_response(API_VERSIONS, 0, await client.next_frame(), a_id).error_code, 0);
  const second = decode_response(PRODUCE, V.produce, await client.next_frame(), b_id);
  assert.equal(only_partition(second, 'responses', 'partition_responses').error_code, 0);

  assert.deepEqual((await fetch_values(broker.canary, TOPIC)).values, ['byte-0', 'byte-1', 'byte-2']);
  await broker.assert_healthy();
});
