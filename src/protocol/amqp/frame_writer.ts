// Builds whole AMQP 0-9-1 frames to write to a socket: method frames, the content header and body
// frames that follow a content-bearing method, and the heartbeat. Method and header payloads are
// encoded straight into their frame's buffer, leaving room for the frame's prefix and end octet.
import {
  FRAME_BODY,
  FRAME_END,
  FRAME_HEADER,
  FRAME_HEARTBEAT,
  FRAME_METHOD,
  FRAME_OVERHEAD_BYTES,
} from './constants.ts';
import { encode_method_with_room, type MethodArgs, type MethodInput, type MethodName } from './methods.ts';
import { encode_content_header_with_room, type BasicProperties } from './properties.ts';

/** Type (1) + channel (2) + payload size (4). */
const PREFIX_BYTES = 7;

export const HEARTBEAT_FRAME: Buffer = Buffer.from([FRAME_HEARTBEAT, 0, 0, 0, 0, 0, 0, FRAME_END]);

/** Fills in the prefix and end octet of a frame whose payload already sits between them. */
function seal(buf: Buffer, type: number, channel: number): Buffer {
  buf[0] = type;
  buf.writeUInt16BE(channel, 1);
  buf.writeUInt32BE(buf.length - FRAME_OVERHEAD_BYTES, 3);
  buf[buf.length - 1] = FRAME_END;
  return buf;
}

/** A frame around `payload` (copied). */
export function frame(type: number, channel: number, payload: Buffer): Buffer {
  const buf = Buffer.allocUnsafe(payload.length + FRAME_OVERHEAD_BYTES);
  payload.copy(buf, PREFIX_BYTES);
  return seal(buf, type, channel);
}

/** The whole method frame for method `name` on `channel`. */
export function method_frame<N extends MethodName>(
  channel: number,
  name: N,
  args: MethodArgs<N> | MethodInput<N>,
): Buffer {
  return seal(encode_method_with_room(name, args, PREFIX_BYTES, 1), FRAME_METHOD, channel);
}

/**
 * The content header frame and then the body frames, each with at most frame_max − 8 bytes of the
 * body; an empty body has no body frame. `properties` may be raw flags and list to send as is.
 */
export function content_frames(
  channel: number,
  class_id: number,
  body: Buffer,
  properties: BasicProperties | Buffer,
  frame_max_bytes: number,
): Buffer[] {
  if (!Number.isInteger(frame_max_bytes) || frame_max_bytes <= FRAME_OVERHEAD_BYTES) {
    throw new RangeError(`frame_max ${frame_max_bytes} leaves no room for a body`);
  }
  const header = encode_content_header_with_room(class_id, body.length, properties, PREFIX_BYTES, 1);
  if (header.length > frame_max_bytes) {
    throw new RangeError(`content header frame of ${header.length} bytes exceeds frame_max ${frame_max_bytes}`);
  }
  const frames = [seal(header, FRAME_HEADER, channel)];
  const body_max_bytes = frame_max_bytes - FRAME_OVERHEAD_BYTES;
  for (let at = 0; at < body.length; at += body_max_bytes) {
    frames.push(frame(FRAME_BODY, channel, body.subarray(at, at + body_max_bytes)));
  }
  return frames;
}
