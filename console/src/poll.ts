// Repeats a refresh while a page is open. Each tick waits for the previous one, so a slow broker
// never has requests from this page piling up; a failing tick is reported and the next one tries
// again, since a broker that restarts should not leave a dead page behind.

/** How often live figures (throughput, lag) refresh. */
export const POLL_INTERVAL_MS = 1_000;

export interface PollOptions {
  interval_ms?: number;
  /** Wait one interval before the first tick (the page already shows fresh figures). */
  delay_first?: boolean;
}

export function poll(
  signal: AbortSignal,
  tick: () => Promise<void>,
  on_error: (error: unknown) => void,
  options: PollOptions = {},
): void {
  const interval_ms = options.interval_ms ?? POLL_INTERVAL_MS;
  const run = async () => {
    if (signal.aborted) return;
    try {
      await tick();
    } catch (error) {
      if (!signal.aborted) on_error(error);
    }
    if (!signal.aborted) setTimeout(run, interval_ms);
  };
  if (options.delay_first) setTimeout(run, interval_ms);
  else void run();
}
