/**
 * What the local stand-ins' HTTP servers share (the API adapter, the PayPal imitation, the Solana
 * JSON-RPC shim), so each keeps only what differs: listening on loopback on a given or free port,
 * reading the body with a size limit, answering JSON, turning a thrown error into a 500 rather
 * than a hung socket, and closing without waiting for idle keep-alive clients. `freePort` serves
 * the stand-ins that are not ours to listen for (DynamoDB Local's jar, local SQS).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';

/** A request with its body already read. */
export interface LocalRequest {
  /** Upper-case. */
  method: string;
  url: URL;
  body: string;
  /** For what only some stand-ins read: headers, socket, HTTP version. */
  raw: IncomingMessage;
}

/**
 * Answers one request. It may leave `res` unanswered on purpose (a stand-in imitating a request
 * that never gets an answer); a throw is answered with `internalError`.
 */
export type LocalHandler = (request: LocalRequest, res: ServerResponse) => void | Promise<void>;

export interface JsonReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface LocalServerOptions {
  /** Default 0: a free port chosen by the system. */
  port?: number;
  /** Default 127.0.0.1: nothing local should be reachable from the network unless asked. */
  host?: string;
  /** Default 10 MiB, API Gateway's payload limit. */
  maxBodyBytes?: number;
  /** The answer to a body over the limit; default 413 `{"error":"request body too large"}`. */
  tooLarge?: () => JsonReply;
  /** The answer when the handler throws; default 500 `{"error":"internal error"}`. */
  internalError?: (error: unknown) => JsonReply;
}

export interface LocalServer {
  url: string;
  port: number;
  /** Drops open connections (idle keep-alive ones too) and resolves once the server is closed. */
  stop(): Promise<void>;
}

export class PortInUseError extends Error {
  constructor(readonly port: number) {
    super(`port ${port} is already in use`);
    this.name = 'PortInUseError';
  }
}

const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

/** Starts `handler` on `host:port`; rejects with `PortInUseError` when the port is taken. */
export async function startLocalServer(handler: LocalHandler, opts: LocalServerOptions = {}): Promise<LocalServer> {
  const host = opts.host ?? '127.0.0.1';
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const tooLarge = opts.tooLarge ?? (() => ({ status: 413, body: { error: 'request body too large' } }));
  const internalError = opts.internalError ?? (() => ({ status: 500, body: { error: 'internal error' } }));

  const server = createServer((req, res) => {
    void serve(req, res).catch((error: unknown) => {
      // Headers already out: the only honest answer left is a broken response.
      if (res.headersSent) res.destroy();
      else sendReply(res, internalError(error));
    });
  });
  // Longer than fetch's (undici's) 4 s idle keep-alive, so a client never reuses a socket the
  // server has just closed.
  server.keepAliveTimeout = 5_000;

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req, maxBodyBytes);
    if (body === undefined) return sendReply(res, tooLarge());
    const method = (req.method ?? 'GET').toUpperCase();
    await handler({ method, url: new URL(req.url ?? '/', 'http://localhost'), body, raw: req }, res);
  }

  const requested = opts.port ?? 0;
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'EADDRINUSE' ? new PortInUseError(requested) : error));
    server.listen(requested, host, () => resolve((server.address() as AddressInfo).port));
  });
  return {
    url: `http://${host}:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The body as UTF-8 text, or undefined when it is longer than `maxBytes`. A body over the limit
 * is still read to its end (and dropped), so the client gets the answer rather than a reset.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > maxBytes ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Answers `body` as JSON. `headers` may override the content type. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

/** Answers text that already is JSON (a Lambda result's body). */
export function sendJsonText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

function sendReply(res: ServerResponse, reply: JsonReply): void {
  sendJson(res, reply.status, reply.body, reply.headers);
}

/**
 * A loopback port free right now, for a server we cannot ask to pick its own (a child process, a
 * library). Another process may take it before it is used; the local stack accepts that race.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
