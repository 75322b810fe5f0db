// /healthz says the process serves; /readyz says the broker is started, not shutting down, and its
// storage can take writes (no partition taken offline by a failed write or fsync).
import type { Core } from '../../core/index.ts';

export interface Readiness {
  ready: boolean;
  reasons: string[];
}

/** Offline partitions named in a not-ready answer at most. */
const OFFLINE_NAMED_MAX = 10;

export function readiness(core: Core, shutting_down: boolean): Readiness {
  const reasons: string[] = [];
  if (shutting_down) reasons.push('the broker is shutting down');
  const offline = core.partitions.offline();
  if (offline.length > 0) {
    const named = offline.slice(0, OFFLINE_NAMED_MAX).join(', ');
    reasons.push(
      `${offline.length} partition(s) offline after a failed write or fsync: ${named}` +
        `${offline.length > OFFLINE_NAMED_MAX ? ', ...' : ''}`,
    );
  }
  return { ready: reasons.length === 0, reasons };
}
