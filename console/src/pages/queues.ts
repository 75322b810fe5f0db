// Queues (share groups): how many records each holds in flight or ready, how often they were
// redelivered, and how many went to a dead-letter topic or expired, then the AMQP queues with
// their topics, share groups and bindings; one queue's partitions, members and settings.
import { api, type AmqpBinding, type AmqpQueue, type QueueDetail } from '../api.ts';
import {
  LIST_PAGE_SIZE,
  error_box,
  fmt,
  h,
  link,
  list_offset,
  list_pager,
  page_header,
  replace,
  stats,
  table,
} from '../dom.ts';
import { poll } from '../poll.ts';
import { href, path_segment, type View } from '../router.ts';
import { compact, plain_table } from './plain_table.ts';

const topic_links = (topics: string[]) =>
  topics.map((t, i) => [i > 0 ? ', ' : '', link(href(`/topics/${path_segment(t)}`), t)]);

const count = (n: number | null) => (n === null ? '–' : fmt.int(n));

/** "exchange → key" for each binding to the queue (the default exchange's is implied). */
function bindings_of(queue: AmqpQueue, bindings: AmqpBinding[]): string {
  const mine = bindings.filter(
    (b) => b.vhost === queue.vhost && b.destination_type === 'queue' && b.destination === queue.name,
  );
  return mine.map((b) => `${b.source || '(default)'} → ${b.routing_key || '(any)'}`).join(', ') || '–';
}

/** The AMQP queues of every vhost: each a topic read by a share group, with its bindings. */
function amqp_table(queues: AmqpQueue[], bindings: AmqpBinding[]): HTMLElement {
  return table(
    [
      { title: 'Vhost', cell: (q) => h('span', { class: 'mono' }, q.vhost) },
      { title: 'Queue', cell: (q) => h('span', { class: 'mono' }, q.name) },
      { title: 'Topic', cell: (q) => link(href(`/topics/${path_segment(q.topic)}`), q.topic) },
      { title: 'Share group', cell: (q) => link(href(`/queues/${path_segment(q.group)}`), q.group) },
      { title: 'Ready', cell: (q) => count(q.ready), numeric: true, testid: 'amqp-ready' },
      { title: 'Unacked', cell: (q) => count(q.unacked), numeric: true },
      { title: 'Consumers', cell: (q) => count(q.consumers), numeric: true },
      {
        title: 'Bindings',
        cell: (q) => h('span', { class: 'mono small' }, bindings_of(q, bindings)),
        testid: 'amqp-bindings',
      },
      { title: 'Arguments', cell: (q) => h('span', { class: 'mono small' }, compact(q.arguments)) },
    ],
    queues,
    {
      testid: 'amqp-queues-table',
      empty: 'No AMQP queues declared.',
      row_attrs: (q) => ({ testid: 'amqp-queue-row', 'data-queue': q.name, 'data-vhost': q.vhost }),
    },
  );
}

export async function queues_page({ root, query, signal }: View): Promise<void> {
  const [queues, amqp_queues, amqp_bindings] = await Promise.all([
    api.queues(list_offset(query), LIST_PAGE_SIZE, signal),
    api.amqp_queues(signal),
    api.amqp_bindings(signal),
  ]);
  replace(
    root,
    page_header(
      'Queues',
      h('span', { class: 'muted' }, 'share groups: competing consumers, each message acknowledged on its own'),
    ),
    table(
      [
        { title: 'Group', cell: (q) => link(href(`/queues/${path_segment(q.group_id)}`), q.group_id) },
        { title: 'Topics', cell: (q) => topic_links(q.topics) },
        { title: 'Members', cell: (q) => fmt.int(q.members), numeric: true },
        { title: 'In flight', cell: (q) => fmt.int(q.in_flight), numeric: true, testid: 'queue-in-flight' },
        { title: 'Available', cell: (q) => fmt.int(q.available), numeric: true, testid: 'queue-available' },
        { title: 'Redeliveries', cell: (q) => fmt.int(q.redeliveries), numeric: true, testid: 'queue-redeliveries' },
        {
          title: 'Dead-lettered',
          cell: (q) => (q.dead_lettered > 0 ? link('#/dead-letters', fmt.int(q.dead_lettered)) : '0'),
          numeric: true,
          testid: 'queue-dead-lettered',
        },
        { title: 'Expired', cell: (q) => fmt.int(q.expired), numeric: true },
      ],
      queues.items,
      {
        testid: 'queues-table',
        empty: 'No queues: no share group has consumed yet.',
        row_attrs: (q) => ({ testid: 'queue-row', 'data-group': q.group_id }),
      },
    ),
    list_pager(queues, LIST_PAGE_SIZE, (o) => href('/queues', { offset: o > 0 ? o : undefined }), 'queues'),
    h('p', { class: 'muted small' }, 'Redeliveries, dead-lettered and expired count since the broker started.'),
    h('h2', {}, 'AMQP queues'),
    amqp_table(amqp_queues, amqp_bindings),
  );
}

/** The share-partition figures worth a column; the API reports a few more. */
const PARTITION_COLUMNS: Array<[field: string, title: string]> = [
  ['start_offset', 'Start'],
  ['end_offset', 'End'],
  ['in_flight', 'In flight'],
  ['available', 'Available'],
  ['acknowledged', 'Acknowledged'],
  ['archived', 'Archived'],
  ['delivery_count_max', 'Most deliveries'],
];

function partitions_table(queue: QueueDetail): HTMLElement {
  const number = (row: Record<string, unknown>, field: string) =>
    typeof row[field] === 'number' ? fmt.int(row[field] as number) : compact(row[field]);
  return table(
    [
      {
        title: 'Topic',
        cell: (p) =>
          link(href(`/topics/${path_segment(String(p.topic))}`, { partition: String(p.partition) }), String(p.topic)),
      },
      { title: 'Partition', cell: (p) => number(p, 'partition'), numeric: true },
      ...PARTITION_COLUMNS.map(([field, title]) => ({
        title,
        cell: (p: Record<string, unknown>) => number(p, field),
        numeric: true,
      })),
    ],
    queue.partitions,
    { testid: 'queue-partitions-table', empty: 'No partitions read yet.' },
  );
}

function show_queue(body: HTMLElement, queue: QueueDetail): void {
  replace(
    body,
    h('p', {}, 'Reads ', topic_links(queue.topics)),
    stats([
      { label: 'Members', value: fmt.int(queue.members.length) },
      { label: 'In flight', value: fmt.int(queue.in_flight), testid: 'queue-in-flight' },
      { label: 'Available', value: fmt.int(queue.available), testid: 'queue-available' },
      { label: 'Redeliveries', value: fmt.int(queue.redeliveries), testid: 'queue-redeliveries' },
      { label: 'Dead-lettered', value: fmt.int(queue.dead_lettered), testid: 'queue-dead-lettered' },
      { label: 'Expired', value: fmt.int(queue.expired) },
    ]),
    h('h2', {}, 'Partitions'),
    partitions_table(queue),
    h('h2', {}, 'Members'),
    plain_table(queue.members, { testid: 'queue-members-table', empty: 'No members right now.' }),
    h('h2', {}, 'Settings'),
    table(
      [
        { title: 'Setting', cell: ([name]) => h('span', { class: 'mono' }, name) },
        { title: 'Value', cell: ([, value]) => h('span', { class: 'mono' }, compact(value)) },
      ],
      Object.entries(queue.settings ?? {}),
      { testid: 'queue-settings-table', empty: 'No settings reported.' },
    ),
  );
}

export async function queue_detail_page({ root, params, signal }: View): Promise<void> {
  const group = params.group!;
  const body = h('div');
  const live_error = h('div');
  show_queue(body, await api.queue(group, signal));
  replace(
    root,
    page_header(`Queue ${group}`, h('span', { class: 'muted' }, 'refreshes every second')),
    live_error,
    body,
  );
  poll(
    signal,
    async () => {
      show_queue(body, await api.queue(group, signal));
      replace(live_error);
    },
    (error) => replace(live_error, error_box(error, 'The figures below are not updating')),
    { delay_first: true },
  );
}
