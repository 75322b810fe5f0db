// The dead-letter format, shared by the broker (which writes dead letters, and redrives them for the
// HTTP admin API) and the SDK (which lists, reads and redrives them for `sluice dlq`): the headers a
// dead letter carries, the `<topic>.<group>.dlq` naming, what a redriven message looks like, and the
// audit records in `sluice.dlq.audit` that keep a dead letter from being redriven twice. Both
// redrive paths write and read the same audit records, so either one skips what the other did.

export const DLQ_HEADERS = {
  topic: 'sluice-dlq-topic',
  partition: 'sluice-dlq-partition',
  offset: 'sluice-dlq-offset',
  group: 'sluice-dlq-group',
  delivery_count: 'sluice-dlq-delivery-count',
  reason: 'sluice-dlq-reason',
  time_ms: 'sluice-dlq-time-ms',
} as const;

export const DLQ_SUFFIX = '.dlq';
export const DLQ_HEADER_PREFIX = 'sluice-dlq-';
export const DLQ_AUDIT_TOPIC = 'sluice.dlq.audit';
/** Header naming the dead letter a redriven message came from ("<dlq>/<partition>/<offset>"). */
export const REDRIVEN_FROM_HEADER = 'sluice-redriven-from';

const TOPIC_NAME_MAX = 249;

/** `<topic>.<group>.dlq`, with characters a topic name cannot hold replaced by '_'. */
export function dead_letter_topic_name(topic: string, group: string): string {
  const safe_group = group.replace(/[^a-zA-Z0-9._-]/g, '_');
  const name = `${topic}.${safe_group}${DLQ_SUFFIX}`;
  return name.length <= TOPIC_NAME_MAX ? name : `${name.slice(0, TOPIC_NAME_MAX - DLQ_SUFFIX.length)}${DLQ_SUFFIX}`;
}

export function is_dead_letter_topic_name(name: string): boolean {
  return name.endsWith(DLQ_SUFFIX);
}

/** The origin topic and group a dead-letter topic's name says (the group is '' when it names none). */
export function dead_letter_origin_of(name: string): { origin: string; group: string } {
  const base = name.endsWith(DLQ_SUFFIX) ? name.slice(0, -DLQ_SUFFIX.length) : name;
  const at = base.lastIndexOf('.');
  return at < 0 ? { origin: base, group: '' } : { origin: base.slice(0, at), group: base.slice(at + 1) };
}

/** Whether a header of a dead letter goes along when it is redriven (the dead-letter ones do not). */
export function keeps_header_on_redrive(name: string): boolean {
  return !name.startsWith(DLQ_HEADER_PREFIX) && name !== REDRIVEN_FROM_HEADER;
}

export function redriven_from(dlq: string, partition: number, offset: number): string {
  return `${dlq}/${partition}/${offset}`;
}

/** One audit record: which dead letter went where. */
export interface RedriveAudit {
  dlq: string;
  partition: number;
  offset: number;
  to: string;
  to_partition: number;
  /** -1 when the message was scheduled for later (it carries a delay header). */
  to_offset: number;
  time_ms: number;
}

export function audit_key(entry: Pick<RedriveAudit, 'dlq' | 'partition' | 'offset'>): string {
  return redriven_from(entry.dlq, entry.partition, entry.offset);
}

export function encode_audit(entry: RedriveAudit): string {
  return JSON.stringify(entry);
}

/** The audit record in a message value; null when it is not one. */
export function parse_audit(
  value: Buffer | null | undefined,
): Pick<RedriveAudit, 'dlq' | 'partition' | 'offset'> | null {
  if (!value) return null;
  try {
    const record = JSON.parse(value.toString('utf8')) as Partial<RedriveAudit>;
    if (typeof record.dlq !== 'string' || typeof record.partition !== 'number' || typeof record.offset !== 'number')
      return null;
    return { dlq: record.dlq, partition: record.partition, offset: record.offset };
  } catch {
    return null;
  }
}
