// Consumer groups: the list with each group's total lag, and one group's members, committed
// offsets against the partitions' ends, and its lag over time (refreshed while the page is open).
import { api, type GroupDetail, type GroupMember } from '../api.ts';
import { LiveChart } from '../chart.ts';
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

export async function groups_page({ root, query, signal }: View): Promise<void> {
  const groups = await api.groups(list_offset(query), LIST_PAGE_SIZE, signal);
  replace(
    root,
    page_header('Consumer groups'),
    table(
      [
        { title: 'Group', cell: (g) => link(href(`/groups/${path_segment(g.group_id)}`), g.group_id) },
        { title: 'State', cell: (g) => state_tag(g.state) },
        { title: 'Members', cell: (g) => fmt.int(g.members), numeric: true },
        { title: 'Lag', cell: (g) => fmt.int(g.lag), numeric: true, testid: 'group-lag' },
      ],
      groups.items,
      {
        testid: 'groups-table',
        empty: 'No consumer groups.',
        row_attrs: (g) => ({ testid: 'group-row', 'data-group': g.group_id }),
      },
    ),
    list_pager(groups, LIST_PAGE_SIZE, (o) => href('/groups', { offset: o > 0 ? o : undefined }), 'groups'),
  );
}

export function state_tag(state: string): HTMLElement {
  return h('span', { class: `tag state-${state.toLowerCase().replace(/[^a-z]/g, '')}` }, state);
}

function members_table(members: GroupMember[]): HTMLElement {
  return table(
    [
      { title: 'Member', cell: (m) => h('span', { class: 'mono small' }, m.member_id) },
      { title: 'Client', cell: (m) => m.client_id },
      { title: 'Host', cell: (m) => m.host },
      { title: 'Instance', cell: (m) => m.group_instance_id ?? '–' },
      {
        title: 'Assigned',
        cell: (m) => m.assignments.map((a) => h('div', {}, `${a.topic} [${a.partitions.join(', ')}]`)),
      },
    ],
    members,
    { testid: 'members-table', empty: 'No members: nothing consumes for this group right now.' },
  );
}

export async function group_detail_page({ root, params, signal }: View): Promise<void> {
  const id = params.id!;
  const chart = new LiveChart([{ label: 'lag (messages)', color: '#d97706' }], {
    testid: 'lag-chart',
    y_label: 'messages behind',
    format: (n) => fmt.int(Math.round(n)),
  });
  signal.addEventListener('abort', () => chart.destroy());
  const summary = h('div');
  const offsets = h('div');
  const members = h('div');
  const live_error = h('div');
  const first = await api.group(id, signal);
  replace(
    root,
    page_header(`Group ${id}`, h('span', { class: 'muted' }, 'refreshes every second')),
    live_error,
    summary,
    h('div', { class: 'card' }, h('div', { class: 'card-title' }, h('h2', {}, 'Lag over time')), chart.element),
    h('h2', {}, 'Committed offsets'),
    offsets,
    h('h2', {}, 'Members'),
    members,
  );
  const show = (group: GroupDetail) => {
    replace(
      summary,
      stats([
        { label: 'State', value: state_tag(group.state), testid: 'group-state' },
        { label: 'Assignor', value: h('span', { class: 'stat-text' }, group.protocol || '–') },
        { label: 'Members', value: fmt.int(group.members.length), testid: 'group-members' },
        { label: 'Total lag', value: fmt.int(group.lag), testid: 'group-total-lag' },
      ]),
    );
    replace(
      offsets,
      table(
        [
          {
            title: 'Topic',
            cell: (o) => link(href(`/topics/${path_segment(o.topic)}`, { partition: o.partition }), o.topic),
          },
          { title: 'Partition', cell: (o) => o.partition, numeric: true },
          {
            title: 'Committed',
            cell: (o) => (o.committed === null ? h('span', { class: 'muted' }, 'none yet') : fmt.int(o.committed)),
            numeric: true,
            testid: 'committed',
          },
          { title: 'End', cell: (o) => fmt.int(o.high_watermark), numeric: true, testid: 'end' },
          { title: 'Lag', cell: (o) => fmt.int(o.lag), numeric: true, testid: 'lag' },
        ],
        group.offsets,
        {
          testid: 'offsets-table',
          empty: 'This group has committed no offsets.',
          row_attrs: (o) => ({ testid: 'offset-row', 'data-topic': o.topic, 'data-partition': o.partition }),
        },
      ),
    );
    replace(members, members_table(group.members));
    chart.push(Date.now(), [group.lag]);
  };
  show(first);
  poll(
    signal,
    async () => {
      const group = await api.group(id, signal);
      replace(live_error);
      show(group);
    },
    (error) => replace(live_error, error_box(error, 'The figures below are not updating')),
    { delay_first: true },
  );
}
