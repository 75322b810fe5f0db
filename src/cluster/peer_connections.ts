// Connections from this broker to other brokers of the cluster, one per peer, opened on first use
// at the address the peer registered, and dropped on failure so the next use reconnects. Each user
// (forwarded produces, remote reads, the long polls that watch remote partitions) keeps its own
// pool: a long poll must not hold up a request queued behind it on the same connection.
import type { Connection, ConnectionOptions } from '../protocol/kafka/client_connection.ts';
import type { PeerDialer } from './peer_dialer.ts';
import { BrokerError } from '../core/errors.ts';
import type { ClusterView } from './model.ts';

export class PeerConnections {
  private readonly connections = new Map<number, Promise<Connection>>();

  constructor(
    private readonly view: () => ClusterView,
    private readonly options: ConnectionOptions,
    private readonly dial: PeerDialer,
  ) {}

  /** The connection to a registered broker; leader_not_available when it is not registered. */
  async get(node_id: number): Promise<Connection> {
    let connection = this.connections.get(node_id);
    if (!connection) {
      const address = this.view().brokers.get(node_id);
      if (!address) throw new BrokerError('leader_not_available', `broker ${node_id} is not registered`);
      connection = this.dial(address.host, address.port, this.options);
      connection.catch(() => this.connections.delete(node_id));
      this.connections.set(node_id, connection);
    }
    const open = await connection;
    if (!open.is_closed) return open;
    if (this.connections.get(node_id) === connection) this.connections.delete(node_id);
    return this.get(node_id);
  }

  drop(node_id: number): void {
    const connection = this.connections.get(node_id);
    this.connections.delete(node_id);
    void connection?.then(
      (c) => c.close(),
      () => undefined,
    );
  }

  close(): void {
    for (const node_id of [...this.connections.keys()]) this.drop(node_id);
  }
}
