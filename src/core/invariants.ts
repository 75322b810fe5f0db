// Invariants: conditions the broker relies on and never expects to see broken (a follower's
// appends continue its log, the high watermark never goes back, an acknowledged offset is below
// the high watermark). A broken invariant means the broker's state can no longer be trusted, so
// it must not go on serving: the failure is logged and the process exits. Anything may detect one
// (storage uses its own assert(); the core and the cluster invariant() below); is_invariant_failure() recognises
// both, so a front end that catches an error while answering a request stops the process
// (stop_on_invariant_failure) instead of answering UNKNOWN_SERVER_ERROR.
import { AssertionError as NodeAssertionError } from 'node:assert';
import { AssertionError as StorageAssertionError } from '../storage/index.ts';
import type { Logger } from './clock.ts';

/** Exit status of a process stopped by a broken invariant (EX_SOFTWARE). */
export const INVARIANT_EXIT_CODE = 70;

export class InvariantError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvariantError';
  }
}

/** Throws InvariantError when `condition` is false; `message` says what should have held. */
export function invariant(condition: boolean, message: string | (() => string)): asserts condition {
  if (!condition) throw new InvariantError(typeof message === 'string' ? message : message());
}

export function is_invariant_failure(error: unknown): error is Error {
  return (
    error instanceof InvariantError || error instanceof StorageAssertionError || error instanceof NodeAssertionError
  );
}

/** What stops the process; tests replace it to observe the stop without dying. */
export interface Stopper {
  stop(error: Error): void;
}

const EXIT: Stopper = {
  stop(error) {
    // Synchronous write: the process exits before an asynchronous logger would flush.
    process.stderr.write(`sluice: invariant broken, stopping: ${error.stack ?? error.message}\n`);
    process.exit(INVARIANT_EXIT_CODE);
  },
};

let stopper: Stopper = EXIT;

/** Replaces what stops the process (tests); returns a function that puts the previous one back. */
export function set_invariant_stopper(next: Stopper): () => void {
  const previous = stopper;
  stopper = next;
  return () => {
    stopper = previous;
  };
}

/**
 * Called with any error caught while serving: a broken invariant is logged and stops the process;
 * anything else returns false for the caller to handle.
 */
export function stop_on_invariant_failure(error: unknown, logger: Logger): boolean {
  if (!is_invariant_failure(error)) return false;
  logger.error({ error: error.message, stack: error.stack }, 'invariant broken: stopping the broker');
  stopper.stop(error);
  return true;
}

/**
 * For the process that runs the broker (`sluice start`): an error nobody caught — a broken
 * invariant in background work such as a write or a flush round — is logged through `logger` and
 * stops the process (INVARIANT_EXIT_CODE for an invariant, 1 for anything else).
 */
export function stop_on_uncaught_errors(logger: Logger): void {
  const stop = (error: unknown) => {
    if (stop_on_invariant_failure(error, logger)) return;
    logger.error(
      { error: String(error), stack: error instanceof Error ? error.stack : undefined },
      'uncaught error: stopping the broker',
    );
    process.exit(1);
  };
  process.on('uncaughtException', stop);
  process.on('unhandledRejection', stop);
}

/**
 * For catch blocks that log a failure and go on (retry loops, timers): a broken invariant is not a
 * failure to retry, so it is thrown on, to stop the process.
 */
export function rethrow_invariant(error: unknown): void {
  if (is_invariant_failure(error)) throw error;
}
