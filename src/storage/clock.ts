// Time as the storage layer sees it; tests substitute a manual clock.
export interface Clock {
  now_ms(): number;
}

export const SYSTEM_CLOCK: Clock = { now_ms: () => Date.now() };

/**
 * Milliseconds that only move forward at the machine's pace, whatever the wall clock does (NTP
 * steps, a clock set by hand): what leases and timeouts are measured with.
 */
export const MONOTONIC_CLOCK: Clock = { now_ms: () => performance.now() };

export class ManualClock implements Clock {
  constructor(public current_ms: number = 1_700_000_000_000) {}
  now_ms(): number {
    return this.current_ms;
  }
  advance(ms: number): void {
    this.current_ms += ms;
  }
}

/** The logging calls storage makes; a pino logger fits. */
export interface Logger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export const SILENT_LOGGER: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
