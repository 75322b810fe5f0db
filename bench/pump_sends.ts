// Keeps a bounded number of producer calls outstanding, for the throughput benchmarks.
import { performance } from 'node:perf_hooks';

/**
 * Sends `share` messages through `send(count)` calls of at most `per_send` messages, with up to
 * `in_flight` calls outstanding; stops starting calls once `deadline` (performance.now()) passed.
 * `on_ack(count)` runs as each call is acknowledged. Resolves once nothing is outstanding.
 */
export function pump_sends(
  share: number,
  per_send: number,
  in_flight_max: number,
  deadline: number,
  send: (count: number) => Promise<unknown>,
  on_ack: (count: number) => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let unsent = share;
    let in_flight = 0;
    let failed = false;
    let stopped = false;
    const pump = () => {
      if (performance.now() > deadline) stopped = true;
      while (!failed && !stopped && unsent > 0 && in_flight < in_flight_max) {
        const count = Math.min(per_send, unsent);
        unsent -= count;
        in_flight++;
        send(count).then(
          () => {
            in_flight--;
            on_ack(count);
            pump();
          },
          (error: unknown) => {
            failed = true;
            reject(error);
          },
        );
      }
      if (!failed && in_flight === 0 && (unsent === 0 || stopped)) resolve();
    };
    pump();
  });
}
