// Transactional messages with check-back, as the broker and the SDK both see them. A half message
// is one record written in a Kafka transaction of a transactional id `__sluice_half/<group>/<name>`:
// consumers see it only once that transaction commits. When it stays open past its timeout, the
// transaction coordinator asks the producers of its group what became of it: a copy of the record
// (key, value, headers) with the check headers below, appended to `__sluice_txn_checks`, which those
// producers consume as the share group `__sluice_txn_checks/<group>` and answer with EndTxn. A half
// message still unanswered after the last check is copied to `__sluice_txn_unresolved` with the
// headers saying where it was, and aborted.

export const HALF_ID_PREFIX = '__sluice_half/';
export const TXN_CHECKS_TOPIC = '__sluice_txn_checks';
export const TXN_UNRESOLVED_TOPIC = '__sluice_txn_unresolved';

/** Headers a check request and an unresolved copy add to the half message's own. */
export const HALF_HEADERS = {
  group: 'sluice-txn-group',
  transactional_id: 'sluice-txn-id',
  topic: 'sluice-txn-topic',
  partition: 'sluice-txn-partition',
  offset: 'sluice-txn-offset',
  /** Check requests only: the transaction as EndTxn names it, and which check this is. */
  producer_id: 'sluice-txn-producer-id',
  producer_epoch: 'sluice-txn-producer-epoch',
  check: 'sluice-txn-check',
  checks_max: 'sluice-txn-checks-max',
} as const;

export const HALF_HEADER_PREFIX = 'sluice-txn-';

/** A group name: letters, digits, `.`, `_` and `-` (it is part of a transactional id and a group id). */
const GROUP_NAME = /^[A-Za-z0-9._-]{1,200}$/;

export function is_group_name(name: string): boolean {
  return GROUP_NAME.test(name);
}

export function half_transactional_id(group: string, name: string): string {
  return `${HALF_ID_PREFIX}${group}/${name}`;
}

/** The group of a half message's transactional id; null for any other transactional id. */
export function half_group_of(transactional_id: string): string | null {
  if (!transactional_id.startsWith(HALF_ID_PREFIX)) return null;
  const rest = transactional_id.slice(HALF_ID_PREFIX.length);
  const slash = rest.indexOf('/');
  const group = slash < 0 ? '' : rest.slice(0, slash);
  return is_group_name(group) ? group : null;
}

/** The share group through which the producers of `group` receive its check requests. */
export function check_share_group(group: string): string {
  return `${TXN_CHECKS_TOPIC}/${group}`;
}

/** A check request: the transaction to settle, as EndTxn names it, and where its record is. */
export interface CheckRequest {
  group: string;
  transactional_id: string;
  producer_id: number;
  producer_epoch: number;
  topic: string;
  partition: number;
  /** -1 when the record was no longer found. */
  offset: number;
  /** 1 for the first check of this transaction. */
  check: number;
  /** Of the checks made before the half message is given up as unresolved. */
  checks_max: number;
}

/** The headers of a check request. */
export function check_headers(request: CheckRequest): Array<{ key: string; value: Buffer }> {
  return Object.entries(HALF_HEADERS).map(([field, key]) => ({
    key,
    value: Buffer.from(String(request[field as keyof CheckRequest])),
  }));
}

/** The check request a record's headers carry; null when they carry none (or a malformed one). */
export function parse_check(headers: ReadonlyArray<{ key: string; value: Buffer | null }>): CheckRequest | null {
  const text = new Map<string, string>();
  for (const { key, value } of headers) if (key.startsWith(HALF_HEADER_PREFIX)) text.set(key, value?.toString() ?? '');
  const number = (key: string) => {
    const value = Number(text.get(key));
    return Number.isSafeInteger(value) ? value : null;
  };
  const request = {
    group: text.get(HALF_HEADERS.group),
    transactional_id: text.get(HALF_HEADERS.transactional_id),
    producer_id: number(HALF_HEADERS.producer_id),
    producer_epoch: number(HALF_HEADERS.producer_epoch),
    topic: text.get(HALF_HEADERS.topic),
    partition: number(HALF_HEADERS.partition),
    offset: number(HALF_HEADERS.offset),
    check: number(HALF_HEADERS.check),
    checks_max: number(HALF_HEADERS.checks_max),
  };
  return Object.values(request).every((value) => value !== undefined && value !== null)
    ? (request as CheckRequest)
    : null;
}
