/**
 * A real webhook receiver on 127.0.0.1 for the tests: records every request (headers, raw body,
 * arrival time) and answers what the test scripts (a status per request, or a delay).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Status codes for the next requests, in order; 200 once they run out. */
  script: number[];
  /** Every answer waits this long first (ms). */
  delayMs: number;
  /** Resolves with the first request satisfying `match`, or rejects after `timeoutMs`. */
  waitFor(match: (r: Received) => boolean, timeoutMs?: number): Promise<Received>;
  stop(): Promise<void>;
}

export async function startReceiver(path = '/hook'): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: { match: (r: Received) => boolean; resolve: (r: Received) => void }[] = [];
  // Answers still waiting out `delayMs`: cleared on stop, so a hung receiver keeps nothing alive.
  const pending = new Set<NodeJS.Timeout>();
  let server: Server;
  const receiver: Receiver = {
    url: '',
    received,
    script: [],
    delayMs: 0,
    waitFor(match, timeoutMs = 5_000) {
      const found = received.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching webhook within ${timeoutMs} ms (got ${received.length})`)), timeoutMs);
        waiters.push({
          match,
          resolve: (r) => {
            clearTimeout(timer);
            resolve(r);
          },
        });
      });
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const timer of pending) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(r);
      for (const w of [...waiters]) {
        if (w.match(r)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(r);
        }
      }
      const status = receiver.script.shift() ?? 200;
      const timer = setTimeout(() => {
        pending.delete(timer);
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(status < 300 ? 'ok' : 'nope');
      }, receiver.delayMs);
      pending.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}

/** The event in a received request. */
export const eventOf = (r: Received) =>
  JSON.parse(r.body) as { id: string; type: string; createdAt: string; data: Record<string, unknown> };
