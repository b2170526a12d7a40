/**
 * The sender against real local HTTP servers: no redirect followed, at most a small body read,
 * the timeout, and the address rule applied at connect time (DNS rebinding: the host is checked
 * when the delivery connects, not only when the endpoint was registered).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_RESPONSE_BYTES } from '../../functions/core/webhooks';
import { sendWebhook } from '../../functions/webhooks/sender';

let server: Server;
let base: string;
let port: number;
let bytesWritten = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: `http://127.0.0.1:${port}/ok` });
        return res.end();
      }
      if (req.url === '/huge') {
        res.writeHead(500);
        const chunk = Buffer.alloc(64 * 1024, 'x');
        // Keeps writing until the client goes away; counts what it managed to send.
        const pump = () => {
          while (res.writableLength < 1_000_000 && !res.destroyed) {
            bytesWritten += chunk.length;
            if (!res.write(chunk)) return res.once('drain', pump);
            if (bytesWritten > 50_000_000) return res.end();
          }
        };
        return pump();
      }
      if (req.url === '/slow') return setTimeout(() => res.end('late'), 2_000);
      res.writeHead(req.url === '/ok' ? 204 : 404);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const local = { allowLoopback: true };
const send = (path: string, opts: { timeoutMs?: number; host?: string; policy?: { allowLoopback: boolean } } = {}) =>
  sendWebhook({
    url: `${opts.host ?? base}${path}`,
    headers: { 'webhook-id': 'evt_x' },
    body: '{}',
    timeoutMs: opts.timeoutMs ?? 2_000,
    policy: opts.policy ?? local,
  });

describe('sendWebhook', () => {
  it('counts a 2xx as delivered', async () => {
    expect(await send('/ok')).toMatchObject({ ok: true, statusCode: 204 });
  });

  it('never follows a redirect: a 3xx is a failed attempt', async () => {
    const outcome = await send('/redirect');
    expect(outcome).toMatchObject({ ok: false, statusCode: 302, error: 'redirect not followed (302)' });
  });

  it('reads at most a small part of the answer, then drops the connection', async () => {
    const outcome = await send('/huge');
    expect(outcome.ok).toBe(false);
    expect(outcome.statusCode).toBe(500);
    expect(outcome.error?.length).toBeLessThanOrEqual(250);
    expect(MAX_RESPONSE_BYTES).toBeLessThanOrEqual(4096);
    // The server could not push its 50 MB: the client stopped reading.
    expect(bytesWritten).toBeLessThan(20_000_000);
  });

  it('gives up after the timeout', async () => {
    const started = Date.now();
    const outcome = await send('/slow', { timeoutMs: 300 });
    expect(outcome).toMatchObject({ ok: false, error: 'timed out after 300 ms' });
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('refuses loopback on AWS settings, by IP literal and by a name resolving to it (checked at connect)', async () => {
    const aws = { allowLoopback: false };
    const literal = await send('/ok', { policy: aws });
    expect(literal).toMatchObject({ ok: false, error: '127.0.0.1 is not an allowed address' });
    // `localhost` resolves to loopback at send time: refused before any connection.
    const named = await send('/ok', { host: `http://localhost:${port}`, policy: aws });
    expect(named.ok).toBe(false);
    expect(named.error).toContain('resolves to an address that is not allowed');
  });

  it('reports a refused connection as a failed attempt, never a throw', async () => {
    const outcome = await send('/ok', { host: 'http://127.0.0.1:1' });
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toContain('ECONNREFUSED');
  });
});
