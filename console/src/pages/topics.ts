// Topics: one page of the topic list at a time (the broker may hold thousands), with a switch for
// internal topics and a form to create one.
import { api } from '../api.ts';
import { error_box, fmt, h, link, list_offset, list_pager, page_header, replace, table } from '../dom.ts';
import { href, path_segment, type View } from '../router.ts';

/** Topics per page of the list. */
export const TOPICS_PAGE_SIZE = 50;
const DEFAULT_NEW_PARTITIONS = 1;

export async function topics_page({ root, query, signal }: View): Promise<void> {
  const internal = query.get('internal') === 'true';
  const page = await api.topics(list_offset(query), TOPICS_PAGE_SIZE, internal, signal);
  const here = (o: number, i = internal) =>
    href('/topics', { offset: o > 0 ? o : undefined, internal: i ? 'true' : undefined });
  replace(
    root,
    page_header(
      'Topics',
      h(
        'label',
        { class: 'toggle' },
        h('input', {
          type: 'checkbox',
          checked: internal,
          testid: 'show-internal',
          onchange: () => (location.hash = here(0, !internal)),
        }),
        ' show internal topics',
      ),
    ),
    create_form(),
    table(
      [
        {
          title: 'Name',
          cell: (t) => [
            link(href(`/topics/${path_segment(t.name)}`), t.name),
            t.internal ? h('span', { class: 'tag' }, 'internal') : null,
          ],
        },
        { title: 'Partitions', cell: (t) => fmt.int(t.partitions), numeric: true },
        { title: 'Messages', cell: (t) => fmt.int(t.messages), numeric: true, testid: 'topic-messages' },
        { title: 'Size', cell: (t) => fmt.bytes(t.bytes), numeric: true },
      ],
      page.items,
      {
        testid: 'topics-table',
        empty: 'No topics yet.',
        row_attrs: (t) => ({ testid: 'topic-row', 'data-topic': t.name }),
      },
    ),
    list_pager(page, TOPICS_PAGE_SIZE, here, 'topics'),
  );
}

function create_form(): HTMLElement {
  const name = h('input', {
    name: 'name',
    required: true,
    placeholder: 'topic name',
    pattern: '[a-zA-Z0-9._\\-]{1,249}',
    testid: 'new-topic-name',
  });
  const partitions = h('input', {
    name: 'partitions',
    type: 'number',
    min: 1,
    value: DEFAULT_NEW_PARTITIONS,
    testid: 'new-topic-partitions',
  });
  const status = h('div');
  const form = h(
    'form',
    {
      class: 'inline-form',
      testid: 'create-topic',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        replace(status);
        try {
          await api.create_topic(name.value, Number(partitions.value));
          location.hash = href(`/topics/${path_segment(name.value)}`);
        } catch (error) {
          replace(status, error_box(error, `Could not create ${name.value}`));
        }
      },
    },
    h('span', { class: 'form-label' }, 'New topic'),
    name,
    h('label', {}, 'partitions ', partitions),
    h('button', { type: 'submit' }, 'Create'),
  );
  return h('div', {}, form, status);
}
