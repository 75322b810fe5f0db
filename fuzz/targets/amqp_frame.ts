// AMQP 0-9-1 as the broker reads it: the input is what a client sends after the protocol header,
// fed to the frame reader in pieces (so frames that span reads are assembled too), and each frame
// decoded as the connection does: methods with their field tables, content headers with their
// properties (and the raw properties decoded again, as a redelivery does), AMQPLAIN login tables,
// and the tables routing keeps (declare and bind arguments, message headers).
import { AmqpError, FRAME_HEADER, FRAME_METHOD, PROTOCOL_HEADER } from '../../src/protocol/amqp/constants.ts';
import { decode_table_body, type FieldTable } from '../../src/protocol/amqp/field_table.ts';
import { FrameReader, type Frame } from '../../src/protocol/amqp/frame_reader.ts';
import { decode_method } from '../../src/protocol/amqp/methods.ts';
import { decode_content_header, decode_properties } from '../../src/protocol/amqp/properties.ts';
import { routing_args, routing_headers } from '../../src/server/amqp/arguments.ts';
import { AMQP_LIMITS_DEFAULT } from '../../src/server/amqp/connection.ts';
import type { FuzzTarget } from '../engine/target.ts';

/** Pieces of every length from 1 to this come up, depending on the input's length. */
const PIECE_BYTES_MAX = 61;

function on_frame(frame: Frame): void {
  if (frame.type === FRAME_METHOD) {
    const method = decode_method(frame.payload);
    if (method.name === 'connection.start-ok' && method.args.mechanism === 'AMQPLAIN')
      decode_table_body(method.args.response);
    for (const value of Object.values(method.args)) {
      if (typeof value === 'object' && !Buffer.isBuffer(value)) routing_args(value as FieldTable);
    }
  } else if (frame.type === FRAME_HEADER) {
    const header = decode_content_header(frame.payload);
    routing_headers(header.properties.headers);
    decode_properties(Buffer.from(header.properties_raw));
  }
}

function read_stream(input: Buffer): void {
  const reader = new FrameReader(AMQP_LIMITS_DEFAULT.frame_max_bytes);
  reader.push(PROTOCOL_HEADER);
  reader.take_protocol_header();
  const piece = 1 + (input.length % PIECE_BYTES_MAX);
  for (let at = 0; at < input.length; at += piece) {
    reader.push(input.subarray(at, at + piece));
    for (let frame = reader.next(); frame !== null; frame = reader.next()) on_frame(frame);
  }
}

export const target: FuzzTarget = {
  name: 'amqp_frame',
  summary: 'frame reader, then method, content-header, property and field-table decoding of each frame',
  run: read_stream,
  is_expected: (error) => error instanceof AmqpError,
  max_bytes: 64 * 1024,
  dictionary: [
    '\x00\x0a\x00\x0b', // connection.start-ok
    '\x00\x3c\x00\x28', // basic.publish
    '\x00\x32\x00\x0a', // queue.declare
    '\x00\x3c\x00\x00\x00\x00', // content header: basic, weight
    'AMQPLAIN',
    '\x05LOGINS',
    '\x08PASSWORDS',
    '\x07headersF',
  ].map((token) => Buffer.from(token, 'latin1')),
};
