// Part 2 of the delayed-delivery benchmark: delayed messages at a steady rate (delayMs drawn from a
// seeded generator), sent on a timer by the SDK producer, and their lateness at a consumer group.
import type { Message, Producer } from '../../src/sdk/producer.ts';
import { check_counts, Lateness, lateness_figures, open_part, wait_for_all } from './lateness.ts';
import {
  f0,
  f1,
  PART_GRACE_MS,
  PartFailed,
  percentile,
  random_from,
  report_broker_output,
  say,
  secs,
  stop_broker,
  table,
  value_of,
  with_timeout,
  type DelayedOptions,
} from './support.ts';

const RATE_TICK_MS = 10;

const RATE_DELAY_MIN_MS = 1_000;

const RATE_DELAY_MAX_MS = 5_000;

export interface RateFigures {
  p99: number;
  max: number;
}

export async function part_rate(options: DelayedOptions): Promise<RateFigures> {
  const { rate, rate_s } = options;
  const total = rate * rate_s;
  const part_deadline = Date.now() + rate_s * 1000 + PART_GRACE_MS;
  say(
    `\n## 2. Steady rate: ${f0(rate)} delayed msg/s for ${rate_s} s, ` +
      `delayMs ${RATE_DELAY_MIN_MS}-${RATE_DELAY_MAX_MS}`,
  );
  const topic = 'rate';
  const tracker = new Lateness(total);
  const { broker, consumer, crashed, producer } = await open_part(topic, tracker);

  const sending = await send_at_rate(producer, topic, tracker, rate, part_deadline);
  if (sending.failure()) throw new PartFailed(`rate: a send failed: ${String(sending.failure())}`);
  if (sending.sent < total)
    throw new PartFailed(`rate: time limit passed with ${f0(sending.sent)} of ${f0(total)} messages sent`);
  await with_timeout(Promise.all(sending.sends), part_deadline - Date.now(), 'rate: acknowledgements');
  await wait_for_all(tracker, part_deadline, crashed, 'rate', sending.failure);
  await producer.disconnect();
  await consumer.disconnect();
  const stopped = await stop_broker(broker, 'rate');

  const l = report_rate(tracker, sending);
  check_counts(tracker, 'rate');
  report_broker_output(broker.output(), 'rate');
  if (stopped.code !== 0) say(`broker exit code ${String(stopped.code)} after SIGTERM`);
  return { p99: l.p99, max: l.max };
}

/** How the sending went: the sends, their acknowledgement times, and the first failure. */
interface RateSending {
  sends: Array<Promise<unknown>>;
  ack_ms: number[];
  /** Acknowledgement time minus send time, by message number. */
  ack_delay: Float64Array;
  sent: number;
  ticks: number;
  send_ms: number;
  failure: () => unknown;
}

/**
 * Sends `tracker.expected` delayed messages at `rate` per second: every RATE_TICK_MS, what the
 * schedule owes by then, in one send(), each with a random delay; records each message's due time
 * in `tracker`. Resolves once all are sent, a send failed or the deadline passed.
 */
async function send_at_rate(
  producer: Producer,
  topic: string,
  tracker: Lateness,
  rate: number,
  part_deadline: number,
): Promise<RateSending> {
  const total = tracker.expected;
  const random = random_from(20261130);
  const sends: Array<Promise<unknown>> = [];
  const ack_ms: number[] = [];
  const ack_delay = new Float64Array(total);
  let send_failure: unknown = null;
  let sent = 0;
  let ticks = 0;
  const start = Date.now();
  const sending_done = new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      ticks++;
      const now = Date.now();
      const owed = Math.min(total, Math.floor(((now - start) * rate) / 1000));
      if (owed > sent) {
        const messages: Message[] = [];
        for (; sent < owed; sent++) {
          const delay = RATE_DELAY_MIN_MS + Math.floor(random() * (RATE_DELAY_MAX_MS - RATE_DELAY_MIN_MS + 1));
          tracker.due[sent] = now + delay;
          messages.push({ key: null, value: value_of(sent), delayMs: delay });
        }
        const sent_at = performance.now();
        const [first, end] = [sent - messages.length, sent];
        sends.push(
          producer.send({ topic, messages }).then(
            () => {
              const took = performance.now() - sent_at;
              ack_ms.push(took);
              ack_delay.fill(took, first, end);
            },
            (error: unknown) => (send_failure ??= error),
          ),
        );
      }
      if (sent >= total || now > part_deadline || send_failure) {
        clearInterval(timer);
        resolve();
      }
    }, RATE_TICK_MS);
  });
  await sending_done;
  const send_ms = Date.now() - start;
  return { sends, ack_ms, ack_delay, sent, ticks, send_ms, failure: () => send_failure };
}

/** Prints part 2's figures; returns the lateness figures. */
function report_rate(tracker: Lateness, sending: RateSending) {
  const { sent, send_ms, ticks, ack_delay } = sending;
  const l = lateness_figures(tracker);
  const acks = Float64Array.from(sending.ack_ms).sort();
  // The broker's due time lies between send + delay and acknowledgement + delay: lateness from the
  // acknowledgement is a lower bound of the lateness the broker and the consumer add.
  const from_ack = new Float64Array(tracker.received);
  let n = 0;
  for (let i = 0; i < tracker.expected; i++)
    if (!Number.isNaN(tracker.received_at[i]!))
      from_ack[n++] = tracker.received_at[i]! - tracker.due[i]! - ack_delay[i]!;
  from_ack.sort();
  const pct = (values: Float64Array, q: number) => f0(percentile(values, q));
  table(
    ['figure', 'value'],
    [
      ['messages sent', `${f0(sent)} in ${secs(send_ms)} (${f0(sent / (send_ms / 1000))} msg/s, ${f0(ticks)} ticks)`],
      [
        'send() to acknowledgement p50 / p99 / max',
        `${f1(percentile(acks, 0.5))} / ${f1(percentile(acks, 0.99))} / ${f1(acks[acks.length - 1] ?? NaN)} ms`,
      ],
      ['messages received', f0(tracker.received)],
      ['early (must be 0)', tracker.early],
      ['delivered twice', tracker.duplicates],
      ['lateness p50', `${f0(l.p50)} ms`],
      ['lateness p99', `${f0(l.p99)} ms`],
      ['lateness p99.9', `${f0(l.p999)} ms`],
      ['lateness max', `${f0(l.max)} ms`],
      ['lateness min', `${f0(l.min)} ms`],
      [
        'lateness from the acknowledgement (lower bound) p50 / p99 / max',
        `${pct(from_ack, 0.5)} / ${pct(from_ack, 0.99)} / ${f0(from_ack[from_ack.length - 1] ?? NaN)} ms`,
      ],
    ],
  );
  say(
    'Lateness is receipt in the consumer minus (send time + delayMs): it includes the produce path ' +
      '(the broker counts the delay from',
  );
  say("its receive time) and the consumer's fetch path.");
  return l;
}
