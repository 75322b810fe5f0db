// The wait of a long poll (Fetch, ShareFetch): until something it listens to fires, its time is up,
// or the listener shuts down — whichever comes first; every listener is removed when it ends.
import type { ShutdownSignal } from './handler.ts';

/** `listen(wake)` subscribes `wake` to what may end the wait and returns the unsubscribes. */
export function long_poll(
  wait_ms: number,
  closing: ShutdownSignal,
  listen: (wake: () => void) => Array<() => void>,
): Promise<void> {
  return new Promise((resolve) => {
    const unsubscribes: Array<() => void> = [];
    const done = () => {
      clearTimeout(timer);
      for (const unsubscribe of unsubscribes) unsubscribe();
      resolve();
    };
    const timer = setTimeout(done, wait_ms);
    unsubscribes.push(...listen(done), closing.on_raise(done));
  });
}
