// Kafka's standard topic configs that have no effect in Sluice: accepted, checked as Kafka checks
// them, stored and described, so that tools and clients that set them (Kafka Connect, Streams,
// admin scripts) work. Each says why it has no effect; docs/kafka-compatibility.md lists them.
import type { ConfigValueType } from '../core/types.ts';

export interface ConfigSpec {
  default: string;
  type: ConfigValueType;
  /** An error message, or null when valid. */
  validate(value: string): string | null;
  /** What it means, as DescribeConfigs documents it. */
  doc: string;
  /** Why it has no effect in Sluice (absent: it has). */
  ignored?: string;
}

const INT64_MAX = 9223372036854775807n;
export const LONG_MAX = String(INT64_MAX);

/** A whole number from `min` to `max` (by default the largest 64-bit one, Kafka's "no limit"). */
export function whole(min: number, max: bigint = INT64_MAX) {
  return (value: string) =>
    /^-?\d{1,19}$/.test(value) && BigInt(value) >= BigInt(min) && BigInt(value) <= max
      ? null
      : `must be an integer from ${min}${max === INT64_MAX ? '' : ` to ${max}`}`;
}

export const boolean = (value: string) => (value === 'true' || value === 'false' ? null : 'must be true or false');

/** Kafka's throttled-replica lists: `*`, empty, or partition:broker pairs. */
const replica_list = (value: string) =>
  value === '' || value === '*' || /^\d+:\d+(,\d+:\d+)*$/.test(value.replace(/\s/g, ''))
    ? null
    : 'must be *, empty, or partition:broker pairs separated by commas';

export const ratio = (value: string) =>
  /^\d*\.?\d+$/.test(value) && Number(value) >= 0 && Number(value) <= 1 ? null : 'must be a number from 0 to 1';

const STORED_AS_SENT = 'batches are stored as the producer compressed them (compression.type=producer)';
const NO_TIERED_STORAGE = 'Sluice has no tiered storage';
const DURABILITY =
  "flushing follows the broker's --durability policy (an fsync before each acknowledgement by default)";
const NO_THROTTLE = 'replication is not throttled';
const TIMESTAMPS_UNCHECKED = "record timestamps are not checked against the broker's clock";

export const IGNORED_TOPIC_CONFIGS: Readonly<Record<string, ConfigSpec & { ignored: string }>> = {
  'compression.gzip.level': {
    default: '-1',
    type: 'int',
    validate: (v) => (v === '-1' ? null : whole(1, 9n)(v)),
    doc: 'gzip level when the broker recompresses (-1: the codec default)',
    ignored: STORED_AS_SENT,
  },
  'compression.lz4.level': {
    default: '9',
    type: 'int',
    validate: whole(1, 17n),
    doc: 'lz4 level when the broker recompresses',
    ignored: STORED_AS_SENT,
  },
  'compression.zstd.level': {
    default: '3',
    type: 'int',
    validate: whole(-131072, 22n),
    doc: 'zstd level when the broker recompresses',
    ignored: STORED_AS_SENT,
  },
  'file.delete.delay.ms': {
    default: '60000',
    type: 'long',
    validate: whole(0),
    doc: 'how long a deleted segment file is kept',
    ignored: 'segment files are deleted as soon as retention removes them',
  },
  'flush.messages': {
    default: LONG_MAX,
    type: 'long',
    validate: whole(1),
    doc: 'messages written between forced flushes',
    ignored: DURABILITY,
  },
  'flush.ms': {
    default: LONG_MAX,
    type: 'long',
    validate: whole(0),
    doc: 'time between forced flushes',
    ignored: DURABILITY,
  },
  'follower.replication.throttled.replicas': {
    default: '',
    type: 'list',
    validate: replica_list,
    doc: 'replicas whose follower fetches are throttled',
    ignored: NO_THROTTLE,
  },
  'leader.replication.throttled.replicas': {
    default: '',
    type: 'list',
    validate: replica_list,
    doc: 'replicas whose leader side of replication is throttled',
    ignored: NO_THROTTLE,
  },
  'local.retention.bytes': {
    default: '-2',
    type: 'long',
    validate: whole(-2),
    doc: 'bytes kept on local disk when older data is tiered (-2: retention.bytes)',
    ignored: NO_TIERED_STORAGE,
  },
  'local.retention.ms': {
    default: '-2',
    type: 'long',
    validate: whole(-2),
    doc: 'time kept on local disk when older data is tiered (-2: retention.ms)',
    ignored: NO_TIERED_STORAGE,
  },
  'remote.storage.enable': {
    default: 'false',
    type: 'boolean',
    validate: (v) => (v === 'false' ? null : 'tiered storage is not implemented: only false'),
    doc: 'whether the topic uses tiered storage',
    ignored: NO_TIERED_STORAGE,
  },
  'remote.log.copy.disable': {
    default: 'false',
    type: 'boolean',
    validate: boolean,
    doc: 'stop copying segments to tiered storage',
    ignored: NO_TIERED_STORAGE,
  },
  'remote.log.delete.on.disable': {
    default: 'false',
    type: 'boolean',
    validate: boolean,
    doc: 'delete tiered data when tiered storage is turned off',
    ignored: NO_TIERED_STORAGE,
  },
  'message.downconversion.enable': {
    default: 'true',
    type: 'boolean',
    validate: boolean,
    doc: 'whether fetches of old message formats are converted',
    ignored: 'Sluice serves record batches (message format v2) only',
  },
  'message.format.version': {
    default: '3.0-IV1',
    type: 'string',
    validate: () => null,
    doc: 'the message format version the topic was written in',
    ignored: 'record batches are always message format v2',
  },
  'message.timestamp.after.max.ms': {
    default: LONG_MAX,
    type: 'long',
    validate: whole(0),
    doc: 'how far after the broker time a record timestamp may be',
    ignored: TIMESTAMPS_UNCHECKED,
  },
  'message.timestamp.before.max.ms': {
    default: LONG_MAX,
    type: 'long',
    validate: whole(0),
    doc: 'how far before the broker time a record timestamp may be',
    ignored: TIMESTAMPS_UNCHECKED,
  },
  'message.timestamp.difference.max.ms': {
    default: LONG_MAX,
    type: 'long',
    validate: whole(0),
    doc: 'how far a record timestamp may be from the broker time (older name of the two above)',
    ignored: TIMESTAMPS_UNCHECKED,
  },
  preallocate: {
    default: 'false',
    type: 'boolean',
    validate: boolean,
    doc: 'whether segment files are allocated in full when made',
    ignored: 'segment files grow as they are written',
  },
  'segment.index.bytes': {
    default: '10485760',
    type: 'int',
    validate: whole(4),
    doc: "the size of a segment's offset index",
    ignored: 'the offset index grows with its segment',
  },
  'segment.jitter.ms': {
    default: '0',
    type: 'long',
    validate: whole(0),
    doc: 'a random amount taken off segment.ms per segment',
    ignored: 'segments roll at segment.ms exactly',
  },
};
