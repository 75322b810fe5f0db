// Part 1 of the delayed-delivery benchmark: messages with deliverAt spread evenly over 1 s ..
// spread-s, produced at once with the SDK producer, and their lateness at a consumer group.
import type { Message } from '../../src/sdk/producer.ts';
import { check_counts, Lateness, lateness_figures, open_part, wait_for_all } from './lateness.ts';
import {
  f0,
  PART_GRACE_MS,
  report_broker_output,
  say,
  secs,
  stop_broker,
  table,
  value_of,
  with_timeout,
  type DelayedOptions,
} from './support.ts';

export async function part_spread(options: DelayedOptions): Promise<void> {
  const { spread_messages, spread_s } = options;
  const part_deadline = Date.now() + spread_s * 1000 + PART_GRACE_MS;
  say(`\n## 1. Lateness over a spread: ${f0(spread_messages)} messages due over 1-${spread_s} s`);
  const topic = 'spread';
  const tracker = new Lateness(spread_messages);
  const { broker, consumer, crashed, producer } = await open_part(topic, tracker);

  const start = Date.now();
  const span_ms = spread_s * 1000 - 1000;
  const messages: Message[] = new Array(spread_messages);
  for (let i = 0; i < spread_messages; i++) {
    const at = start + 1000 + (spread_messages > 1 ? Math.floor((span_ms * i) / (spread_messages - 1)) : 0);
    tracker.due[i] = at;
    messages[i] = { key: null, value: value_of(i), deliverAt: at };
  }
  const sends: Array<Promise<unknown>> = [];
  for (let i = 0; i < spread_messages; i += 1000)
    sends.push(producer.send({ topic, messages: messages.slice(i, i + 1000) }));
  await with_timeout(Promise.all(sends), part_deadline - Date.now(), 'spread: producing');
  const produced_ms = Date.now() - start;
  say(`  produced and acknowledged in ${secs(produced_ms)}`);
  await wait_for_all(tracker, part_deadline, crashed, 'spread');
  const wall_ms = tracker.last_receipt - start;
  await producer.disconnect();
  await consumer.disconnect();
  const stopped = await stop_broker(broker, 'spread');

  const l = lateness_figures(tracker);
  table(
    ['figure', 'value'],
    [
      ['messages received', `${f0(tracker.received)} of ${f0(spread_messages)}`],
      ['early (must be 0)', tracker.early],
      ['delivered twice', tracker.duplicates],
      ['produce time (all acknowledged)', secs(produced_ms)],
      ['lateness p50', `${f0(l.p50)} ms`],
      ['lateness p99', `${f0(l.p99)} ms`],
      ['lateness p99.9', `${f0(l.p999)} ms`],
      ['lateness max', `${f0(l.max)} ms`],
      ['wall time (first send to last receipt)', secs(wall_ms)],
    ],
  );
  say("Lateness is receipt in the consumer minus deliverAt: it includes the consumer's fetch path.");
  check_counts(tracker, 'spread');
  report_broker_output(broker.output(), 'spread');
  if (stopped.code !== 0) say(`broker exit code ${String(stopped.code)} after SIGTERM`);
}
