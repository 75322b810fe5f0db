// The Kafka front end on requests for APIs it does not serve and versions outside the ranges it
// advertises, seen through a raw TCP client. After every case the canary connection must still get
// answers and the records acknowledged before must still be readable.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/kafka/error_codes.ts';
import { PRODUCE } from '../../../src/protocol/kafka/messages/00_produce.ts';
import { METADATA } from '../../../src/protocol/kafka/messages/03_metadata.ts';
import { API_VERSIONS } from '../../../src/protocol/kafka/messages/18_api_versions.ts';
import { decode_response, frame, header_bytes } from './raw_client.ts';
import { V, bad_input_broker, type Row } from './support.ts';

const broker = bad_input_broker();

// ---------------------------------------------------------------- 3. unknown APIs and versions

describe('3. unknown APIs and versions', () => {
  test('unknown API key 999 closes the connection', async () => {
    const from = broker.log.length;
    const client = await broker.connect();
    await client.write(frame(Buffer.concat([header_bytes(999, 0, 7), Buffer.alloc(8)])));
    await client.expect_closed_without_response('API 999');
    assert.ok(broker.close_reasons(from).some((reason) => reason.includes('999')));
    await broker.assert_healthy();
  });

  test('Metadata v99 closes the connection', async () => {
    const client = await broker.connect();
    const body = Buffer.from([0xff, 0xff, 0xff, 0xff, 1]);
    await client.write(frame(Buffer.concat([header_bytes(METADATA.api_key, 99, 7), body])));
    await client.expect_closed_without_response('Metadata v99');
    await broker.assert_healthy();
  });

  test('Produce v2 (below the supported range) and a negative version close the connection', async () => {
    for (const version of [2, -1]) {
      const client = await broker.connect();
      await client.write(frame(Buffer.concat([header_bytes(PRODUCE.api_key, version, 7), Buffer.alloc(16)])));
      await client.expect_closed_without_response(`Produce v${version}`);
    }
    await broker.assert_healthy();
  });

  test('ApiVersions v99 gets a v0-layout answer with UNSUPPORTED_VERSION and the ApiVersions range', async () => {
    const client = await broker.connect();
    const correlation_id = 4242;
    // A newer client would send a v2 header and a flexible body; the broker must not parse the body.
    const header = header_bytes(API_VERSIONS.api_key, 99, correlation_id, true);
    await client.write(frame(Buffer.concat([header, Buffer.from([5, 0x61, 0x62, 0x63, 0x64, 2, 0x31, 0])])));
    const response = decode_response(API_VERSIONS, 0, await client.next_frame(), correlation_id);
    assert.equal(response.error_code, ErrorCode.UNSUPPORTED_VERSION);
    const keys = response.api_keys as Row[];
    const own = keys.find((k) => k.api_key === API_VERSIONS.api_key);
    assert.ok(own, 'the ApiVersions range is in the answer');
    assert.equal(own.min_version, 0);
    assert.equal(own.max_version, V.api_versions);
    // The connection stays usable: the client retries with a supported version.
    const software = { client_software_name: 'retry', client_software_version: '1' };
    const retry = await client.call(API_VERSIONS, V.api_versions, software);
    assert.equal(retry.error_code, 0);
    assert.equal(client.closed, false);
    await broker.assert_healthy();
  });
});
