// A TCP proxy on loopback for cutting a broker off from its peers: cut() drops every connection
// through it (and whatever they had in flight) and refuses new ones until heal(). `observe`, when
// given, is made once per connection and sees every chunk a client sends.
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Connections from now on go to `port`. */
  retarget(port: number): void;
  cut(): void;
  heal(): void;
  close(): Promise<void>;
}

export async function start_tcp_proxy(target_port: number, observe?: () => (chunk: Buffer) => void): Promise<TcpProxy> {
  let target = target_port;
  const sockets = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = net.connect({ host: '127.0.0.1', port: target });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    if (observe) client.on('data', observe());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    retarget: (port) => void (target = port),
    cut: () => {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    heal: () => {
      cut = false;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * An observer for start_tcp_proxy that parses the Kafka request frames a client sends (a 4-byte
 * size, then the API key) and tells `on_frame` each one's API key and bytes.
 */
export function request_frames(on_frame: (api_key: number, bytes: number) => void): () => (chunk: Buffer) => void {
  return () => {
    let pending = Buffer.alloc(0);
    return (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 6) {
        const size = pending.readInt32BE(0);
        if (pending.length < 4 + size) break;
        on_frame(pending.readInt16BE(4), 4 + size);
        pending = pending.subarray(4 + size);
      }
    };
  };
}
