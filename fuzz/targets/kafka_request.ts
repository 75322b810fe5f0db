// Kafka requests as the broker decodes them: the input is one frame without its size prefix (what
// the frame reader hands `dispatch` in server/kafka/connection.ts). The path is dispatch's: the
// request header, the handler of its API key and the version check, then the request body with the
// codec compiled for that version, after the header's tagged fields when the version is flexible.
// A frame the broker would refuse before decoding (too short, unknown API or version) ends here too.
import { read_request_header, skip_header_tags } from '../../src/protocol/kafka/header.ts';
import { message_codec } from '../../src/protocol/kafka/codec.ts';
import { ProtocolDecodeError, Reader } from '../../src/protocol/kafka/wire.ts';
import { handler_table } from '../../src/server/kafka/handlers/index.ts';
import type { FuzzTarget } from '../engine/target.ts';

/** connection.ts refuses smaller frames before decoding them (its REQUEST_BYTES_MIN). */
const REQUEST_BYTES_MIN = 10;

const handlers = handler_table();

/** Decodes the frame as dispatch does; returns the API and version decoded. */
function decode_request(frame: Buffer): string | void {
  if (frame.length < REQUEST_BYTES_MIN) return;
  const reader = new Reader(frame);
  const header = read_request_header(reader);
  const handler = handlers.get(header.api_key);
  if (handler === undefined || header.api_version < handler.min_version || header.api_version > handler.max_version)
    return; // closed (or, for ApiVersions, answered in the v0 layout) without decoding the body
  const codec = message_codec(handler.api.request, header.api_version);
  if (codec.flexible) skip_header_tags(reader);
  codec.decode(reader);
  return `${handler.api.name} v${header.api_version}`;
}

export const target: FuzzTarget = {
  name: 'kafka_request',
  summary: 'request header, handler and version, then the request body of every API and version served',
  run: decode_request,
  is_expected: (error) => error instanceof ProtocolDecodeError,
  max_bytes: 64 * 1024,
};
