// One topic: its partitions with their offsets, its configuration, and a message browser that pages
// through one partition by offset (newest page first).
import { api, type MessagePage, type PartitionInfo, type TopicDetail } from '../api.ts';
import { error_box, fmt, h, headers_cell, link, loading, page_header, payload, replace, stats, table } from '../dom.ts';
import { href, path_segment, type View } from '../router.ts';

/** Messages per page of the browser. */
export const MESSAGES_PAGE_SIZE = 50;

export async function topic_detail_page({ root, params, query, signal }: View): Promise<void> {
  const topic = await api.topic(params.name!, signal);
  const partition_number = Number(query.get('partition') ?? 0);
  const partition = topic.partitions.find((p) => p.partition === partition_number);
  const total = (pick: (p: PartitionInfo) => number) => topic.partitions.reduce((sum, p) => sum + pick(p), 0);

  const browser = h('div', { class: 'card', testid: 'message-browser' });
  replace(
    root,
    page_header(
      topic.name,
      topic.internal ? h('span', { class: 'tag' }, 'internal') : null,
      h('span', { class: 'muted mono' }, topic.id),
    ),
    stats([
      { label: 'Partitions', value: fmt.int(topic.partitions.length) },
      {
        label: 'Messages',
        value: fmt.int(total((p) => p.high_watermark - p.log_start_offset)),
        testid: 'topic-message-count',
      },
      { label: 'Size', value: fmt.bytes(total((p) => p.bytes)) },
    ]),
    h('h2', {}, 'Partitions'),
    partitions_table(topic, partition_number),
    browser,
    h('h2', {}, 'Configuration'),
    configs_table(topic),
  );

  if (!partition) {
    replace(
      browser,
      error_box(new Error(`${topic.name} has no partition ${query.get('partition')}`), 'No such partition'),
    );
    return;
  }
  const requested = query.get('offset');
  const offset =
    requested === null
      ? Math.max(partition.log_start_offset, partition.high_watermark - MESSAGES_PAGE_SIZE)
      : Math.max(0, Number(requested) || 0);
  replace(browser, h('h2', {}, `Messages in partition ${partition.partition}`), loading('Reading messages'));
  try {
    const page = await api.messages(topic.name, partition.partition, offset, MESSAGES_PAGE_SIZE, signal);
    replace(browser, ...message_browser(topic, partition, offset, page));
  } catch (error) {
    if (signal.aborted) return;
    replace(
      browser,
      h('h2', {}, `Messages in partition ${partition.partition}`),
      error_box(error, 'Could not read messages'),
    );
  }
}

function partitions_table(topic: TopicDetail, selected: number): HTMLElement {
  return table(
    [
      {
        title: 'Partition',
        cell: (p) => link(href(`/topics/${path_segment(topic.name)}`, { partition: p.partition }), String(p.partition)),
        numeric: true,
      },
      { title: 'Leader', cell: (p) => p.leader, numeric: true },
      { title: 'Replicas', cell: (p) => p.replicas.join(', ') },
      { title: 'In sync', cell: (p) => p.isr.join(', ') },
      { title: 'Log start', cell: (p) => fmt.int(p.log_start_offset), numeric: true },
      { title: 'High watermark', cell: (p) => fmt.int(p.high_watermark), numeric: true, testid: 'high-watermark' },
      { title: 'Log end', cell: (p) => fmt.int(p.log_end_offset), numeric: true },
      { title: 'Size', cell: (p) => fmt.bytes(p.bytes), numeric: true },
    ],
    topic.partitions,
    {
      testid: 'partitions-table',
      empty: 'No partitions.',
      row_attrs: (p) => ({
        testid: 'partition-row',
        'data-partition': p.partition,
        class: p.partition === selected ? 'selected' : null,
      }),
    },
  );
}

function configs_table(topic: TopicDetail): HTMLElement {
  const rows = Object.entries(topic.configs ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return table(
    [
      { title: 'Name', cell: ([name]) => h('span', { class: 'mono' }, name) },
      {
        title: 'Value',
        cell: ([, value]) =>
          h(
            'span',
            { class: 'mono' },
            typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value),
          ),
      },
    ],
    rows,
    { testid: 'configs-table', empty: 'No configuration overrides.' },
  );
}

function message_browser(topic: TopicDetail, partition: PartitionInfo, offset: number, page: MessagePage): Node[] {
  const to = (o: number) => href(`/topics/${path_segment(topic.name)}`, { partition: partition.partition, offset: o });
  const start = partition.log_start_offset;
  const latest = Math.max(start, page.high_watermark - MESSAGES_PAGE_SIZE);
  const jump = h('input', {
    type: 'number',
    min: start,
    value: offset,
    testid: 'offset-input',
    'aria-label': 'offset',
  });
  const controls = h(
    'form',
    {
      class: 'pager',
      onsubmit: (event: Event) => {
        event.preventDefault();
        location.hash = to(Math.max(0, Number(jump.value) || 0));
      },
    },
    link(to(start), '⇤ First', { class: 'button', testid: 'messages-first' }),
    offset > start
      ? link(to(Math.max(start, offset - MESSAGES_PAGE_SIZE)), '← Older', { class: 'button', testid: 'messages-older' })
      : null,
    page.next_offset < page.high_watermark
      ? link(to(page.next_offset), 'Newer →', { class: 'button', testid: 'messages-newer' })
      : null,
    link(to(latest), 'Latest ⇥', { class: 'button', testid: 'messages-latest' }),
    h('label', {}, 'offset ', jump),
    h('button', { type: 'submit' }, 'Go'),
    h(
      'span',
      { class: 'muted', testid: 'messages-range' },
      page.items.length === 0
        ? `nothing at offset ${fmt.int(offset)} (high watermark ${fmt.int(page.high_watermark)})`
        : `offsets ${fmt.int(page.items[0]!.offset)}–${fmt.int(page.items[page.items.length - 1]!.offset)} of ` +
            `${fmt.int(start)}–${fmt.int(page.high_watermark - 1)}`,
    ),
  );
  return [
    h('h2', {}, `Messages in partition ${partition.partition}`),
    controls,
    table(
      [
        { title: 'Offset', cell: (m) => fmt.int(m.offset), numeric: true },
        { title: 'Time (UTC)', cell: (m) => h('span', { class: 'nowrap' }, fmt.time(m.timestamp_ms)) },
        { title: 'Key', cell: (m) => payload(m.key, 'key'), testid: 'message-key' },
        {
          title: 'Value',
          cell: (m) => [
            payload(m.value),
            m.truncated
              ? [
                  ' ',
                  h(
                    'span',
                    {
                      class: 'tag',
                      title: `the broker shows the start of long fields; the value has ${fmt.bytes(m.value_bytes)}`,
                    },
                    'cut',
                  ),
                ]
              : null,
          ],
          testid: 'message-value',
        },
        { title: 'Headers', cell: (m) => headers_cell(m.headers) },
      ],
      page.items,
      {
        testid: 'messages-table',
        empty: 'No messages in this range.',
        row_attrs: (m) => ({ testid: 'message-row', 'data-offset': m.offset }),
      },
    ),
  ];
}
