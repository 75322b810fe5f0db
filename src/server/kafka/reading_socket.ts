// Gives an accepted connection's reads to a FrameReader.
//
// Node's `onread` (reads into buffers the application supplies instead of a fresh buffer per
// read) exists only for sockets the application creates; `net.Server` has no such option. Node's
// server builds each accepted socket as `new net.Socket({ handle })` around the connection's
// handle, so a server listening with `pauseOnConnect` (nothing read yet) can build a second socket
// around the same handle, this time with `onread`, and let the first go. The `handle` option and
// `_handle` are not public API: when this Node lacks them the accepted socket is fed through its
// 'data' events instead (each read then costs a fresh buffer and a copy, nothing else changes).
import net from 'node:net';
import type { FrameReader } from '../../protocol/kafka/frame_reader.ts';

interface SocketInternals {
  _handle?: unknown;
  /** The server whose connection count the socket gives back when it closes. */
  _server?: net.Server | null;
}

/**
 * The socket to use for `accepted` (from a server created with `pauseOnConnect: true`), its reads
 * going to `reader`.
 */
export function reading_socket(accepted: net.Socket, server: net.Server, reader: FrameReader): net.Socket {
  const internals = accepted as unknown as SocketInternals;
  const handle = internals._handle;
  if (handle && typeof handle === 'object' && 'readStart' in handle && 'useUserBuffer' in handle) {
    const socket = new net.Socket({
      handle,
      onread: { buffer: reader.buffer, callback: reader.on_read },
    } as net.SocketConstructorOpts);
    // The accepted socket counted this connection on the server; the new one must uncount it.
    (socket as unknown as SocketInternals)._server = internals._server ?? server;
    return socket;
  }
  return data_socket(accepted, reader);
}

/** `socket` with its reads going to `reader` through its 'data' events (a TLS socket's, decrypted). */
export function data_socket<S extends net.Socket>(socket: S, reader: FrameReader): S {
  socket.on('data', (data: Buffer) => reader.push(data));
  socket.resume();
  return socket;
}
