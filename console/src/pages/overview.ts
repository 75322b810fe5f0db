// Overview: which cluster and node this is, how many topics, groups, queues and dead-letter topics
// it holds, and live throughput in and out, computed from the broker's running totals.
import { api, type Stats } from '../api.ts';
import { LiveChart } from '../chart.ts';
import { error_box, fmt, h, link, page_header, replace, stats } from '../dom.ts';
import { poll } from '../poll.ts';
import type { View } from '../router.ts';

/** Dead-letter topics whose messages the overview adds up; more are counted as topics only. */
const DEAD_LETTER_TOPICS_COUNTED = 1_000;

export async function overview_page({ root, signal }: View): Promise<void> {
  // One item per list is enough: the totals are what the cards show.
  const [cluster, topics, groups, queues, dead_letters, delayed] = await Promise.all([
    api.cluster(signal),
    api.topics(0, 1, false, signal),
    api.groups(0, 1, signal),
    api.queues(0, 1, signal),
    api.dead_letters(0, DEAD_LETTER_TOPICS_COUNTED, signal),
    api.delayed(signal),
  ]);
  const in_rate = h('span', { testid: 'rate-in' }, '–');
  const out_rate = h('span', { testid: 'rate-out' }, '–');
  const connections = h('span', { testid: 'connections' }, '–');
  const totals = h('p', { class: 'muted', testid: 'totals' });
  const chart_error = h('div');
  const chart = new LiveChart(
    [
      { label: 'in (msg/s)', color: '#2563eb' },
      { label: 'out (msg/s)', color: '#16a34a' },
    ],
    { testid: 'throughput-chart', y_label: 'messages / s', format: fmt.rate },
  );
  signal.addEventListener('abort', () => chart.destroy());

  const dead_letter_count = dead_letters.items.reduce((sum, d) => sum + d.messages, 0);
  replace(
    root,
    page_header('Overview', h('span', { class: 'muted' }, `cluster ${cluster.cluster_id} · node ${cluster.node_id}`)),
    stats([
      { label: 'Topics', value: link('#/topics', fmt.int(topics.total)), testid: 'count-topics' },
      { label: 'Consumer groups', value: link('#/groups', fmt.int(groups.total)), testid: 'count-groups' },
      { label: 'Queues', value: link('#/queues', fmt.int(queues.total)), testid: 'count-queues' },
      {
        label: 'Dead letters',
        value: link('#/dead-letters', fmt.int(dead_letter_count)),
        testid: 'count-dead-letters',
      },
      { label: 'Delayed, pending', value: fmt.int(delayed.pending), testid: 'count-delayed' },
      { label: 'Brokers', value: link('#/brokers', fmt.int(cluster.brokers.length)), testid: 'count-brokers' },
      { label: 'Connections', value: connections },
    ]),
    h(
      'div',
      { class: 'card' },
      h(
        'div',
        { class: 'card-title' },
        h('h2', {}, 'Throughput'),
        h('span', { class: 'rates' }, 'in ', in_rate, ' msg/s · out ', out_rate, ' msg/s'),
      ),
      chart_error,
      chart.element,
      totals,
    ),
  );

  let previous: Stats | null = null;
  poll(
    signal,
    async () => {
      const now = await api.stats(signal);
      replace(chart_error);
      connections.textContent = fmt.int(now.connections);
      const into = `${fmt.int(now.messages_in_total)} messages (${fmt.bytes(now.bytes_in_total)}) in`;
      const out = `${fmt.int(now.messages_out_total)} messages (${fmt.bytes(now.bytes_out_total)}) out`;
      totals.textContent = `Since start: ${into}, ${out}.`;
      if (previous && now.now_ms > previous.now_ms) {
        const seconds = (now.now_ms - previous.now_ms) / 1000;
        // A restarted broker starts its totals again from zero: count that interval as nothing.
        const rate_in = Math.max(0, now.messages_in_total - previous.messages_in_total) / seconds;
        const rate_out = Math.max(0, now.messages_out_total - previous.messages_out_total) / seconds;
        chart.push(now.now_ms, [rate_in, rate_out]);
        in_rate.textContent = fmt.rate(rate_in);
        out_rate.textContent = fmt.rate(rate_out);
      }
      previous = now;
    },
    (error) => replace(chart_error, error_box(error, 'Live figures are not updating')),
  );
}
