// The Kafka front end on pipelined requests, seen through a raw TCP client: many requests in one
// write, long polls among them, and more of them than the connection may have in flight, all
// answered in request order. Afterwards the canary connection must still get answers and the records
// acknowledged before must still be readable.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PRODUCE } from '../../../src/protocol/kafka/messages/00_produce.ts';
import { FETCH } from '../../../src/protocol/kafka/messages/01_fetch.ts';
import { METADATA } from '../../../src/protocol/kafka/messages/03_metadata.ts';
import { API_VERSIONS } from '../../../src/protocol/kafka/messages/18_api_versions.ts';
import { decode_response, encode_request } from './raw_client.ts';
import {
  V,
  bad_input_broker,
  create_topic,
  fetch_body,
  fetch_values,
  metadata_body,
  only_partition,
  produce_body,
  records_of,
  type Row,
} from './support.ts';

const broker = bad_input_broker();

type Kind = 'api_versions' | 'metadata' | 'produce' | 'fetch';

/** One of the pipelined requests of test 7: a produce to `topic` writes `value`, a fetch long-polls. */
function pipelined_request(kind: Kind, correlation_id: number, topic: string, value: string): Buffer {
  if (kind === 'api_versions') {
    const software = { client_software_name: 'pipe', client_software_version: '1' };
    return encode_request(API_VERSIONS, V.api_versions, correlation_id, software);
  }
  if (kind === 'metadata') return encode_request(METADATA, V.metadata, correlation_id, metadata_body([topic]));
  if (kind === 'fetch') {
    const long_poll = { ...fetch_body('pipeline-idle', 0), max_wait_ms: 300, min_bytes: 1 };
    return encode_request(FETCH, V.fetch, correlation_id, long_poll);
  }
  return encode_request(PRODUCE, V.produce, correlation_id, produce_body(topic, records_of([value])));
}

// ---------------------------------------------------------------- 7. pipelining

test('7. 50 pipelined requests in one write are answered in request order', async () => {
  const TOPIC = 'pipelined';
  await create_topic(broker.canary, TOPIC);
  const client = await broker.connect();
  const sent: Array<{ kind: Kind; correlation_id: number; value?: string }> = [];
  const frames: Buffer[] = [];
  for (let i = 0; i < 50; i++) {
    const correlation_id = 1000 + i;
    // One long poll early on: everything behind it finishes first but must be answered after it.
    const kind: Kind = i === 3 ? 'fetch' : (['api_versions', 'metadata', 'produce'] as const)[i % 3]!;
    const value = `pipe-${i}`;
    frames.push(pipelined_request(kind, correlation_id, TOPIC, value));
    if (kind === 'produce') sent.push({ kind, correlation_id, value });
    else sent.push({ kind, correlation_id });
  }
  await create_topic(broker.canary, 'pipeline-idle');
  const started = Date.now();
  await client.write(Buffer.concat(frames));
  const produced: number[] = [];
  for (const request of sent) {
    const response_frame = await client.next_frame();
    assert.equal(response_frame.readInt32BE(0), request.correlation_id, 'responses come back in request order');
    if (request.kind === 'api_versions') {
      const versions = decode_response(API_VERSIONS, V.api_versions, response_frame, request.correlation_id);
      assert.equal(versions.error_code, 0);
    } else if (request.kind === 'metadata') {
      const metadata = decode_response(METADATA, V.metadata, response_frame, request.correlation_id);
      const [topic] = metadata.topics as Row[];
      assert.equal(topic!.error_code, 0);
    } else if (request.kind === 'fetch') {
      decode_response(FETCH, V.fetch, response_frame, request.correlation_id);
      assert.ok(Date.now() - started >= 250, 'the long poll waited');
    } else {
      const response = decode_response(PRODUCE, V.produce, response_frame, request.correlation_id);
      const row = only_partition(response, 'responses', 'partition_responses');
      assert.equal(row.error_code, 0);
      produced.push(row.base_offset as number);
    }
  }
  const values = sent.filter((r) => r.kind === 'produce').map((r) => r.value!);
  assert.deepEqual(
    produced,
    values.map((_, i) => i),
    'offsets follow request order',
  );
  assert.deepEqual((await fetch_values(broker.canary, TOPIC)).values, values);
  assert.equal(client.closed, false);
  await broker.assert_healthy();
});

/** One of the requests of test 7b: a long poll of `poll_ms` or a quick request on topic 'limited'. */
function limited_request(kind: Kind, correlation_id: number, poll_ms: number, value: string): Buffer {
  if (kind === 'fetch') {
    const long_poll = { ...fetch_body('idle', 0), max_wait_ms: poll_ms, min_bytes: 1 };
    return encode_request(FETCH, V.fetch, correlation_id, long_poll);
  }
  if (kind === 'api_versions') return encode_request(API_VERSIONS, 0, correlation_id, {});
  if (kind === 'metadata') return encode_request(METADATA, V.metadata, correlation_id, metadata_body(['limited']));
  return encode_request(PRODUCE, V.produce, correlation_id, produce_body('limited', records_of([value])));
}

test('7b. pipelined requests beyond inflight_requests_max wait their turn and keep their order', async () => {
  const LIMIT = 4;
  const POLL_MS = 200;
  const limited = await broker.start_other('bad-input-inflight', { limits: { inflight_requests_max: LIMIT } });
  try {
    const admin = await broker.connect(limited);
    await create_topic(admin, 'idle');
    await create_topic(admin, 'limited');
    const client = await broker.connect(limited);
    // 12 long polls that each take POLL_MS, then 38 quick requests, all in one write.
    const kinds: Kind[] = [];
    const frames: Buffer[] = [];
    for (let i = 0; i < 50; i++) {
      const kind = i < 12 ? 'fetch' : (['api_versions', 'metadata', 'produce'] as const)[i % 3]!;
      kinds.push(kind);
      frames.push(limited_request(kind, 2000 + i, POLL_MS, `limited-${i}`));
    }
    const started = Date.now();
    await client.write(Buffer.concat(frames));
    const produced: number[] = [];
    for (let i = 0; i < 50; i++) {
      const response_frame = await client.next_frame();
      assert.equal(response_frame.readInt32BE(0), 2000 + i, 'responses come back in request order');
      if (kinds[i] === 'produce') {
        const response = decode_response(PRODUCE, V.produce, response_frame, 2000 + i);
        produced.push(only_partition(response, 'responses', 'partition_responses').base_offset as number);
      }
      if (i === 11) {
        // At most LIMIT long polls run at once: 12 of them take at least 3 rounds.
        const elapsed = Date.now() - started;
        assert.ok(elapsed >= 3 * POLL_MS - 50, `12 long polls with at most ${LIMIT} in flight took only ${elapsed} ms`);
      }
    }
    assert.deepEqual(
      produced,
      produced.map((_, i) => i),
    );
    assert.equal((await fetch_values(admin, 'limited')).values.length, produced.length);
  } finally {
    await limited.close();
  }
  await broker.assert_healthy();
});
