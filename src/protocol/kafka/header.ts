// Request and response headers. Request header v1 (non-flexible requests) is api key, version,
// correlation id and an int16-length client id; v2 (flexible requests) adds a tagged-field section
// but keeps the int16-length client id. Response header v0 is the correlation id; v1 adds a
// tagged-field section, except for ApiVersions, whose response header is always v0.
import { ProtocolDecodeError, type Reader, type Writer } from './wire.ts';

export const API_VERSIONS_KEY = 18;

export interface RequestHeader {
  api_key: number;
  api_version: number;
  correlation_id: number;
  client_id: string | null;
}

/** Reads the fixed part of a request header (v1 layout); tagged fields are read by skip_header_tags. */
export function read_request_header(reader: Reader): RequestHeader {
  const api_key = reader.int16();
  const api_version = reader.int16();
  const correlation_id = reader.int32();
  const length = reader.int16();
  const client_id =
    length < 0 ? null : reader.bytes_slice(reader.checked_length(length, 1, 'client_id')).toString('utf8');
  return { api_key, api_version, correlation_id, client_id };
}

/** Skips the tagged-field section of a request header v2. */
export function skip_header_tags(reader: Reader): void {
  const count = reader.uvarint();
  for (let i = 0; i < count; i++) {
    reader.uvarint();
    const size = reader.uvarint();
    if (size > reader.remaining) throw new ProtocolDecodeError('header tag runs past the frame');
    reader.bytes_slice(size);
  }
}

export function write_request_header(writer: Writer, header: RequestHeader, flexible: boolean): void {
  writer.int16(header.api_key);
  writer.int16(header.api_version);
  writer.int32(header.correlation_id);
  if (header.client_id === null) writer.int16(-1);
  else {
    const bytes = Buffer.from(header.client_id, 'utf8');
    writer.int16(bytes.length);
    writer.raw(bytes);
  }
  if (flexible) writer.uvarint(0);
}

export function response_header_flexible(api_key: number, body_flexible: boolean): boolean {
  return body_flexible && api_key !== API_VERSIONS_KEY;
}

export function write_response_header(writer: Writer, correlation_id: number, flexible: boolean): void {
  writer.int32(correlation_id);
  if (flexible) writer.uvarint(0);
}
