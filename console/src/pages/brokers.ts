// Brokers: the nodes of the cluster as the broker serving this console sees them.
import { api } from '../api.ts';
import { h, page_header, replace, stats, table } from '../dom.ts';
import type { View } from '../router.ts';

export async function brokers_page({ root, signal }: View): Promise<void> {
  const cluster = await api.cluster(signal);
  replace(
    root,
    page_header('Brokers'),
    stats([
      { label: 'Cluster id', value: h('span', { class: 'mono' }, cluster.cluster_id), testid: 'cluster-id' },
      { label: 'This node', value: cluster.node_id, testid: 'node-id' },
      { label: 'Controller', value: cluster.controller, testid: 'controller' },
    ]),
    table(
      [
        { title: 'Node', cell: (b) => b.node_id, numeric: true },
        { title: 'Host', cell: (b) => h('span', { class: 'mono' }, b.host) },
        { title: 'Kafka port', cell: (b) => b.port, numeric: true },
        {
          title: 'Role',
          cell: (b) => [
            b.node_id === cluster.controller ? h('span', { class: 'tag' }, 'controller') : null,
            ' ',
            b.node_id === cluster.node_id ? h('span', { class: 'tag' }, 'this node') : null,
          ],
        },
      ],
      cluster.brokers,
      {
        testid: 'brokers-table',
        empty: 'No brokers reported.',
        row_attrs: (b) => ({ testid: 'broker-row', 'data-node': b.node_id }),
      },
    ),
  );
}
