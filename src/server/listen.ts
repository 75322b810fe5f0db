// What every listener does to start: bind, and fail with the bind's error (a port in use, an
// address not on this host) rather than leave it to an error event nobody waits for.
import type net from 'node:net';

export function listen_on(server: net.Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
