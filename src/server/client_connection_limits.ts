// Connection limits per client address and per user, shared by every listener of a broker (Kafka
// and AMQP), so one address or one user cannot take all the connections a broker accepts. A
// connection counts against its address from accept and against its user from login, until its
// socket closes.
import type net from 'node:net';

export interface ClientConnectionLimitSettings {
  /** Connections one address may hold open at once; 0: no limit. */
  per_ip_max: number;
  /** Connections one user may hold open at once; 0: no limit. */
  per_user_max: number;
}

export class ClientConnectionLimits {
  private readonly by_ip = new Map<string, number>();
  private readonly by_user = new Map<string, number>();

  /** `settings` is read at each connection and login: the limits may change while the broker runs. */
  constructor(private readonly settings: () => ClientConnectionLimitSettings) {}

  /** Counts the socket against its address until it closes; why not, when the address is at its limit. */
  admit_address(socket: net.Socket): string | null {
    const address = socket.remoteAddress ?? '';
    return claim(this.by_ip, address, this.settings().per_ip_max, socket, `address ${address}`);
  }

  /** Counts the socket against `user` until it closes; why not, when the user is at its limit. */
  admit_user(socket: net.Socket, user: string): string | null {
    return claim(this.by_user, user, this.settings().per_user_max, socket, `user ${user}`);
  }

  /** Connections open now per address (for tests and the admin API). */
  open_from(address: string): number {
    return this.by_ip.get(address) ?? 0;
  }
}

function claim(counts: Map<string, number>, key: string, max: number, socket: net.Socket, who: string): string | null {
  if (max <= 0 || socket.destroyed) return null;
  const open = counts.get(key) ?? 0;
  if (open >= max) return `${who} already has ${open} connections open (the limit is ${max})`;
  counts.set(key, open + 1);
  socket.once('close', () => {
    const left = (counts.get(key) ?? 1) - 1;
    if (left <= 0) counts.delete(key);
    else counts.set(key, left);
  });
  return null;
}
