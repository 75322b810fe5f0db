// AMQP 0-9-1 wire constants (frame types, sizes, the protocol header), the reply codes a peer
// closes a channel or connection with, and AmqpError, the one error type the codec throws for
// anything wrong with received bytes, so the server can turn it straight into a close.

export const FRAME_METHOD = 1;
export const FRAME_HEADER = 2;
export const FRAME_BODY = 3;
export const FRAME_HEARTBEAT = 8;
export const FRAME_END = 0xce;
/** Type (1) + channel (2) + payload size (4) + frame-end (1). */
export const FRAME_OVERHEAD_BYTES = 8;
/** The spec's frame-min-size: every peer must accept frames this large, even before tune. */
export const FRAME_MIN_BYTES = 4096;

/** What a client sends first; a server that cannot speak it answers with its own and closes. */
export const PROTOCOL_HEADER: Buffer = Buffer.from([0x41, 0x4d, 0x51, 0x50, 0, 0, 9, 1]);

export const ReplyCode = {
  REPLY_SUCCESS: 200,
  CONTENT_TOO_LARGE: 311,
  NO_ROUTE: 312,
  NO_CONSUMERS: 313,
  CONNECTION_FORCED: 320,
  INVALID_PATH: 402,
  ACCESS_REFUSED: 403,
  NOT_FOUND: 404,
  RESOURCE_LOCKED: 405,
  PRECONDITION_FAILED: 406,
  FRAME_ERROR: 501,
  SYNTAX_ERROR: 502,
  COMMAND_INVALID: 503,
  CHANNEL_ERROR: 504,
  UNEXPECTED_FRAME: 505,
  RESOURCE_ERROR: 506,
  NOT_ALLOWED: 530,
  NOT_IMPLEMENTED: 540,
  INTERNAL_ERROR: 541,
} as const;

export type ReplyCodeName = keyof typeof ReplyCode;
export type ReplyCodeValue = (typeof ReplyCode)[ReplyCodeName];

const REPLY_CODE_NAMES: ReadonlyMap<number, string> = new Map(
  Object.entries(ReplyCode).map(([name, code]) => [code, name]),
);

/** The spec's name of a reply code ('NOT_FOUND'), for reply texts such as "NOT_FOUND - no queue 'q'". */
export function reply_code_name(code: number): string {
  return REPLY_CODE_NAMES.get(code) ?? `REPLY_${code}`;
}

/**
 * A protocol exception: `code` is the reply code to close with, `class_id`/`method_id` name the
 * method that caused it (0 when no method is to blame, e.g. a malformed frame).
 */
export class AmqpError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly class_id = 0,
    readonly method_id = 0,
  ) {
    super(message);
    this.name = 'AmqpError';
  }
}

const HARD_ERROR_CODES: ReadonlySet<number> = new Set([
  ReplyCode.CONNECTION_FORCED,
  ReplyCode.INVALID_PATH,
  ReplyCode.FRAME_ERROR,
  ReplyCode.SYNTAX_ERROR,
  ReplyCode.COMMAND_INVALID,
  ReplyCode.CHANNEL_ERROR,
  ReplyCode.UNEXPECTED_FRAME,
  ReplyCode.RESOURCE_ERROR,
  ReplyCode.NOT_ALLOWED,
  ReplyCode.NOT_IMPLEMENTED,
  ReplyCode.INTERNAL_ERROR,
]);

/** Whether `code` is a connection exception (close the connection) rather than a channel one. */
export function is_hard_error(code: number): boolean {
  return HARD_ERROR_CODES.has(code);
}
