// The declarations of every AMQP 0-9-1 method a RabbitMQ client or server may send (RabbitMQ's
// numbering, so exchange.unbind-ok is 40/51), as data: class and method ids, argument names
// (snake_case), wire types and the defaults an encoder may fill in. methods.ts infers the argument
// types from these and compiles each method's decoder and encoder from them.

export type FieldType =
  'octet' | 'short' | 'long' | 'longlong' | 'shortstr' | 'longstr' | 'bit' | 'table' | 'timestamp';

export interface FieldSpec {
  readonly name: string;
  readonly type: FieldType;
  /** Written when the field is left out of the arguments to encode; without one the field is required. */
  readonly default?: unknown;
  /** Cut to 255 bytes (at a character boundary) instead of refusing a longer string: reply texts. */
  readonly truncate?: boolean;
}

export interface MethodSpec {
  readonly name: string;
  readonly class_id: number;
  readonly method_id: number;
  readonly fields: readonly FieldSpec[];
  /** Followed on its channel by a content header frame and body frames. */
  readonly content: boolean;
}

// ------------------------------------------------------------------ declaration helpers

type FieldOptions = Omit<FieldSpec, 'name' | 'type'>;

function field<const N extends string, const T extends FieldType, const O extends FieldOptions = {}>(
  name: N,
  type: T,
  options?: O,
): { readonly name: N; readonly type: T } & NoInfer<O> {
  return { name, type, ...(options as O) };
}

function method<const N extends string, const F extends readonly FieldSpec[]>(
  name: N,
  class_id: number,
  method_id: number,
  fields: F,
  content = false,
): {
  readonly name: N;
  readonly class_id: number;
  readonly method_id: number;
  readonly fields: F;
  readonly content: boolean;
} {
  return { name, class_id, method_id, fields, content };
}

/** A bit left out is a 0 on the wire. */
const OFF = { default: false } as const;
/** Reserved fields (ticket, out-of-band, channel-id, cluster-id): sent empty, ignored when received. */
const RESERVED_SHORT = field('reserved_1', 'short', { default: 0 });
const RESERVED_SHORTSTR = field('reserved_1', 'shortstr', { default: '' });
const RESERVED_LONGSTR = field('reserved_1', 'longstr', { default: '' });
const ARGUMENTS = field('arguments', 'table', { default: {} });
const NOWAIT = field('nowait', 'bit', OFF);

const CLOSE_FIELDS = [
  field('reply_code', 'short'),
  field('reply_text', 'shortstr', { default: '', truncate: true }),
  field('class_id', 'short', { default: 0 }),
  field('method_id', 'short', { default: 0 }),
] as const;
const TUNE_FIELDS = [field('channel_max', 'short'), field('frame_max', 'long'), field('heartbeat', 'short')] as const;
const EXCHANGE_BIND_FIELDS = [
  RESERVED_SHORT,
  field('destination', 'shortstr'),
  field('source', 'shortstr'),
  field('routing_key', 'shortstr', { default: '' }),
  NOWAIT,
  ARGUMENTS,
] as const;

// ------------------------------------------------------------------ the declarations

export const METHODS = [
  method('connection.start', 10, 10, [
    field('version_major', 'octet', { default: 0 }),
    field('version_minor', 'octet', { default: 9 }),
    field('server_properties', 'table'),
    field('mechanisms', 'longstr'),
    field('locales', 'longstr'),
  ]),
  method('connection.start-ok', 10, 11, [
    field('client_properties', 'table'),
    field('mechanism', 'shortstr'),
    field('response', 'longstr'),
    field('locale', 'shortstr'),
  ]),
  method('connection.secure', 10, 20, [field('challenge', 'longstr')]),
  method('connection.secure-ok', 10, 21, [field('response', 'longstr')]),
  method('connection.tune', 10, 30, TUNE_FIELDS),
  method('connection.tune-ok', 10, 31, TUNE_FIELDS),
  method('connection.open', 10, 40, [
    field('virtual_host', 'shortstr'),
    field('capabilities', 'shortstr', { default: '' }),
    field('insist', 'bit', OFF),
  ]),
  method('connection.open-ok', 10, 41, [field('known_hosts', 'shortstr', { default: '' })]),
  method('connection.close', 10, 50, CLOSE_FIELDS),
  method('connection.close-ok', 10, 51, []),
  method('connection.blocked', 10, 60, [field('reason', 'shortstr', { default: '', truncate: true })]),
  method('connection.unblocked', 10, 61, []),
  method('connection.update-secret', 10, 70, [field('new_secret', 'longstr'), field('reason', 'shortstr')]),
  method('connection.update-secret-ok', 10, 71, []),

  method('channel.open', 20, 10, [RESERVED_SHORTSTR]),
  method('channel.open-ok', 20, 11, [RESERVED_LONGSTR]),
  method('channel.flow', 20, 20, [field('active', 'bit')]),
  method('channel.flow-ok', 20, 21, [field('active', 'bit')]),
  method('channel.close', 20, 40, CLOSE_FIELDS),
  method('channel.close-ok', 20, 41, []),

  method('exchange.declare', 40, 10, [
    RESERVED_SHORT,
    field('exchange', 'shortstr'),
    field('type', 'shortstr'),
    field('passive', 'bit', OFF),
    field('durable', 'bit', OFF),
    field('auto_delete', 'bit', OFF),
    field('internal', 'bit', OFF),
    NOWAIT,
    ARGUMENTS,
  ]),
  method('exchange.declare-ok', 40, 11, []),
  method('exchange.delete', 40, 20, [
    RESERVED_SHORT,
    field('exchange', 'shortstr'),
    field('if_unused', 'bit', OFF),
    NOWAIT,
  ]),
  method('exchange.delete-ok', 40, 21, []),
  method('exchange.bind', 40, 30, EXCHANGE_BIND_FIELDS),
  method('exchange.bind-ok', 40, 31, []),
  method('exchange.unbind', 40, 40, EXCHANGE_BIND_FIELDS),
  method('exchange.unbind-ok', 40, 51, []),

  method('queue.declare', 50, 10, [
    RESERVED_SHORT,
    field('queue', 'shortstr', { default: '' }),
    field('passive', 'bit', OFF),
    field('durable', 'bit', OFF),
    field('exclusive', 'bit', OFF),
    field('auto_delete', 'bit', OFF),
    NOWAIT,
    ARGUMENTS,
  ]),
  method('queue.declare-ok', 50, 11, [
    field('queue', 'shortstr'),
    field('message_count', 'long'),
    field('consumer_count', 'long'),
  ]),
  method('queue.bind', 50, 20, [
    RESERVED_SHORT,
    field('queue', 'shortstr', { default: '' }),
    field('exchange', 'shortstr'),
    field('routing_key', 'shortstr', { default: '' }),
    NOWAIT,
    ARGUMENTS,
  ]),
  method('queue.bind-ok', 50, 21, []),
  method('queue.purge', 50, 30, [RESERVED_SHORT, field('queue', 'shortstr', { default: '' }), NOWAIT]),
  method('queue.purge-ok', 50, 31, [field('message_count', 'long')]),
  method('queue.delete', 50, 40, [
    RESERVED_SHORT,
    field('queue', 'shortstr', { default: '' }),
    field('if_unused', 'bit', OFF),
    field('if_empty', 'bit', OFF),
    NOWAIT,
  ]),
  method('queue.delete-ok', 50, 41, [field('message_count', 'long')]),
  method('queue.unbind', 50, 50, [
    RESERVED_SHORT,
    field('queue', 'shortstr', { default: '' }),
    field('exchange', 'shortstr'),
    field('routing_key', 'shortstr', { default: '' }),
    ARGUMENTS,
  ]),
  method('queue.unbind-ok', 50, 51, []),

  method('basic.qos', 60, 10, [
    field('prefetch_size', 'long', { default: 0 }),
    field('prefetch_count', 'short'),
    field('global', 'bit', OFF),
  ]),
  method('basic.qos-ok', 60, 11, []),
  method('basic.consume', 60, 20, [
    RESERVED_SHORT,
    field('queue', 'shortstr', { default: '' }),
    field('consumer_tag', 'shortstr', { default: '' }),
    field('no_local', 'bit', OFF),
    field('no_ack', 'bit', OFF),
    field('exclusive', 'bit', OFF),
    NOWAIT,
    ARGUMENTS,
  ]),
  method('basic.consume-ok', 60, 21, [field('consumer_tag', 'shortstr')]),
  method('basic.cancel', 60, 30, [field('consumer_tag', 'shortstr'), NOWAIT]),
  method('basic.cancel-ok', 60, 31, [field('consumer_tag', 'shortstr')]),
  method(
    'basic.publish',
    60,
    40,
    [
      RESERVED_SHORT,
      field('exchange', 'shortstr', { default: '' }),
      field('routing_key', 'shortstr', { default: '' }),
      field('mandatory', 'bit', OFF),
      field('immediate', 'bit', OFF),
    ],
    true,
  ),
  method(
    'basic.return',
    60,
    50,
    [
      field('reply_code', 'short'),
      field('reply_text', 'shortstr', { default: '', truncate: true }),
      field('exchange', 'shortstr'),
      field('routing_key', 'shortstr'),
    ],
    true,
  ),
  method(
    'basic.deliver',
    60,
    60,
    [
      field('consumer_tag', 'shortstr'),
      field('delivery_tag', 'longlong'),
      field('redelivered', 'bit', OFF),
      field('exchange', 'shortstr'),
      field('routing_key', 'shortstr'),
    ],
    true,
  ),
  method('basic.get', 60, 70, [
    RESERVED_SHORT,
    field('queue', 'shortstr', { default: '' }),
    field('no_ack', 'bit', OFF),
  ]),
  method(
    'basic.get-ok',
    60,
    71,
    [
      field('delivery_tag', 'longlong'),
      field('redelivered', 'bit', OFF),
      field('exchange', 'shortstr'),
      field('routing_key', 'shortstr'),
      field('message_count', 'long'),
    ],
    true,
  ),
  method('basic.get-empty', 60, 72, [RESERVED_SHORTSTR]),
  method('basic.ack', 60, 80, [field('delivery_tag', 'longlong'), field('multiple', 'bit', OFF)]),
  method('basic.reject', 60, 90, [field('delivery_tag', 'longlong'), field('requeue', 'bit', OFF)]),
  method('basic.recover-async', 60, 100, [field('requeue', 'bit', OFF)]),
  method('basic.recover', 60, 110, [field('requeue', 'bit', OFF)]),
  method('basic.recover-ok', 60, 111, []),
  method('basic.nack', 60, 120, [
    field('delivery_tag', 'longlong'),
    field('multiple', 'bit', OFF),
    field('requeue', 'bit', OFF),
  ]),

  method('confirm.select', 85, 10, [NOWAIT]),
  method('confirm.select-ok', 85, 11, []),

  method('tx.select', 90, 10, []),
  method('tx.select-ok', 90, 11, []),
  method('tx.commit', 90, 20, []),
  method('tx.commit-ok', 90, 21, []),
  method('tx.rollback', 90, 30, []),
  method('tx.rollback-ok', 90, 31, []),
] as const;
