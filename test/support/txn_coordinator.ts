// A transaction coordinator over a log of the caller's, for unit tests: producer ids from 1000,
// every partition accepted, markers and check-back calls doing nothing unless `deps` says otherwise.
import { TxnCoordinator, type TxnCoordinatorDeps, type TxnSettings } from '../../src/broker/txn/txn_coordinator.ts';
import type { TxnLog } from '../../src/broker/txn/txn_log.ts';
import type { Clock } from '../../src/core/clock.ts';

export const TXN_SETTINGS: TxnSettings = {
  timeout_max_ms: 900_000,
  id_expiration_ms: 3_600_000,
  checks_max: 3,
  version: 2,
};
const QUIET = { info() {}, warn() {}, error() {}, debug() {} };

export function open_coordinator(
  log: TxnLog,
  clock: Clock,
  deps: Partial<TxnCoordinatorDeps> = {},
): Promise<TxnCoordinator> {
  let next_producer_id = 1000;
  return TxnCoordinator.open({
    log,
    clock,
    logger: QUIET as never,
    settings: TXN_SETTINGS,
    coordinator_epoch: 0,
    allocate_producer_id: async () => next_producer_id++,
    partition_refusal: () => null,
    write_marker: async () => undefined,
    half: { publish_check: async () => undefined, copy_unresolved: async () => 0 },
    ...deps,
  });
}
