// Dead letters: the dead-letter topics share groups write, a peek at their messages with where each
// came from and why it was given up on, and redrive (one message, or all) back to the origin topic.
import { api, type DeadLetterMessage, type MessagePage } from '../api.ts';
import {
  LIST_PAGE_SIZE,
  error_box,
  fmt,
  h,
  headers_cell,
  link,
  list_offset,
  list_pager,
  page_header,
  payload,
  replace,
  table,
} from '../dom.ts';
import { href, path_segment, type View } from '../router.ts';

/** Dead letters per page of the peek. */
export const DEAD_LETTERS_PAGE_SIZE = 50;
/** The broker's own headers on a dead letter; shown as columns, not among the message's headers. */
const BROKER_HEADER_PREFIX = 'sluice-dlq-';

export async function dead_letters_page({ root, query, signal }: View): Promise<void> {
  const topics = await api.dead_letters(list_offset(query), LIST_PAGE_SIZE, signal);
  replace(
    root,
    page_header(
      'Dead letters',
      h('span', { class: 'muted' }, 'messages queues gave up on, kept in <topic>.<group>.dlq'),
    ),
    table(
      [
        { title: 'Dead-letter topic', cell: (d) => link(href(`/dead-letters/${path_segment(d.topic)}`), d.topic) },
        {
          title: 'Origin topic',
          cell: (d) =>
            d.origin_topic === null ? '–' : link(href(`/topics/${path_segment(d.origin_topic)}`), d.origin_topic),
        },
        { title: 'Group', cell: (d) => link(href(`/queues/${path_segment(d.group)}`), d.group) },
        { title: 'Messages', cell: (d) => fmt.int(d.messages), numeric: true, testid: 'dlq-messages' },
      ],
      topics.items,
      {
        testid: 'dlq-table',
        empty: 'No dead letters. Nothing has failed past its delivery limit.',
        row_attrs: (d) => ({ testid: 'dlq-row', 'data-topic': d.topic }),
      },
    ),
    list_pager(
      topics,
      LIST_PAGE_SIZE,
      (o) => href('/dead-letters', { offset: o > 0 ? o : undefined }),
      'dead-letter topics',
    ),
  );
}

export async function dead_letter_topic_page({ root, params, query, signal }: View): Promise<void> {
  const topic = params.topic!;
  const partition = Math.max(0, Math.floor(Number(query.get('partition'))) || 0);
  const offset = query.has('offset') ? Math.max(0, Math.floor(Number(query.get('offset'))) || 0) : undefined;
  const [page, detail] = await Promise.all([
    api.dead_letter_messages(topic, partition, offset, DEAD_LETTERS_PAGE_SIZE, signal),
    api.topic(topic, signal),
  ]);
  const status = h('div', { class: 'status-line', testid: 'redrive-result', 'aria-live': 'polite' });
  replace(
    root,
    page_header(topic, link('#/dead-letters', '← all dead-letter topics', { class: 'muted' })),
    detail.partitions.length > 1 ? partition_tabs(topic, detail.partitions.length, partition) : null,
    h('div', { class: 'toolbar' }, redrive_all_button(topic, page.items.length === 0, status), status),
    messages_table(topic, partition, page, status),
    pager(topic, partition, page),
  );
}

function partition_tabs(topic: string, count: number, selected: number): HTMLElement {
  return h(
    'nav',
    { class: 'pager' },
    'Partition',
    Array.from({ length: count }, (_, p) =>
      link(href(`/dead-letters/${path_segment(topic)}`, { partition: p }), String(p), {
        class: p === selected ? 'button selected' : 'button',
      }),
    ),
  );
}

function messages_table(
  topic: string,
  partition: number,
  page: MessagePage<DeadLetterMessage>,
  status: HTMLElement,
): HTMLElement {
  return table(
    [
      { title: 'Offset', cell: (m) => fmt.int(m.offset), numeric: true },
      {
        title: 'From, and why',
        cell: (m) => [
          h(
            'div',
            {},
            origin(m),
            h(
              'span',
              { class: 'muted' },
              ` · ${m.delivery_count === null ? '?' : fmt.int(m.delivery_count)} ` +
                `${m.delivery_count === 1 ? 'delivery' : 'deliveries'}`,
            ),
          ),
          h('div', { class: 'reason', testid: 'dlq-reason' }, m.reason ?? 'no reason given'),
          m.dead_lettered_at_ms === null
            ? null
            : h('div', { class: 'muted small' }, `dead-lettered ${fmt.time(m.dead_lettered_at_ms)} UTC`),
        ],
      },
      {
        title: 'Message',
        cell: (m) => [
          h('div', { class: 'small muted' }, 'key ', payload(m.key, 'key')),
          h('div', { class: 'wide', testid: 'dlq-value' }, payload(m.value)),
          headers_cell(m.headers, (name) => name.startsWith(BROKER_HEADER_PREFIX)),
        ],
      },
      { title: '', cell: (m) => redrive_button(topic, partition, m, status) },
    ],
    page.items,
    {
      testid: 'dlq-messages-table',
      empty: 'No dead letters here.',
      row_attrs: (m) => ({ testid: 'dlq-message', 'data-offset': m.offset }),
    },
  );
}

function origin(message: DeadLetterMessage): HTMLElement | string {
  if (message.origin_topic === null) return '–';
  const partition = message.origin_partition ?? 0;
  const at = message.origin_offset === null ? '' : ` @ ${message.origin_offset}`;
  return link(
    href(`/topics/${path_segment(message.origin_topic)}`, { partition, offset: message.origin_offset ?? undefined }),
    `${message.origin_topic}-${partition}${at}`,
  );
}

function redrive_button(
  topic: string,
  partition: number,
  message: DeadLetterMessage,
  status: HTMLElement,
): HTMLElement {
  const button = h('button', { testid: 'redrive', title: 'Send this message back to its origin topic' }, 'Redrive');
  button.addEventListener('click', async () => {
    button.disabled = true;
    const ok = await redrive(
      topic,
      { offsets: [{ partition, offset: message.offset }] },
      `offset ${message.offset}`,
      status,
    );
    button.textContent = ok ? 'Redriven ✓' : 'Redrive';
    button.disabled = ok;
  });
  return button;
}

function redrive_all_button(topic: string, empty: boolean, status: HTMLElement): HTMLElement {
  const button = h('button', { class: 'danger', testid: 'redrive-all', disabled: empty }, 'Redrive all');
  let armed = false;
  button.addEventListener('click', async () => {
    // A second click confirms: redriving everything is easy to do by accident and hard to undo.
    if (!armed) {
      armed = true;
      button.textContent = 'Click again to redrive every message';
      return;
    }
    button.disabled = true;
    await redrive(topic, { all: true }, 'all', status);
    button.textContent = 'Redrive all';
    button.disabled = false;
    armed = false;
  });
  return button;
}

async function redrive(
  topic: string,
  selection: Parameters<typeof api.redrive>[1],
  what: string,
  status: HTMLElement,
): Promise<boolean> {
  replace(status, h('span', { class: 'muted' }, 'Redriving…'));
  try {
    const result = await api.redrive(topic, selection);
    const skipped = result.skipped_already_redriven ?? 0;
    replace(
      status,
      h(
        'span',
        { class: 'ok' },
        `Redrove ${fmt.int(result.redriven)} ${result.redriven === 1 ? 'message' : 'messages'} (${what}) to the ` +
          `origin topic.`,
      ),
      skipped > 0
        ? h('span', { class: 'muted' }, ` ${fmt.int(skipped)} had been redriven before and were left alone.`)
        : null,
    );
    return true;
  } catch (error) {
    replace(status, error_box(error, 'Redrive failed'));
    return false;
  }
}

function pager(topic: string, partition: number, page: MessagePage<DeadLetterMessage>): HTMLElement {
  const to = (o: number) =>
    href(`/dead-letters/${path_segment(topic)}`, { partition: partition > 0 ? partition : undefined, offset: o });
  const first = page.items[0]?.offset ?? page.next_offset;
  const start = page.log_start_offset ?? 0;
  return h(
    'nav',
    { class: 'pager' },
    first > start
      ? link(to(Math.max(start, first - DEAD_LETTERS_PAGE_SIZE)), '← Older', { class: 'button', testid: 'dlq-older' })
      : null,
    page.next_offset < page.high_watermark
      ? link(to(page.next_offset), 'Newer →', { class: 'button', testid: 'dlq-newer' })
      : null,
  );
}
