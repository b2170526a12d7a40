/**
 * The stdio MCP server's HTTP executor (functions/mcp/over-http.ts) against real local servers: it
 * never follows a redirect (the agent key would go along to wherever it points) and speaks plain
 * http only to loopback.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isRedirect, overHttp } from '../../functions/mcp/over-http';
import { TOOLS } from '../../functions/mcp/tools';
import { Refusal } from '../../functions/messages/refusal';

const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

async function serve(answer: (headers: IncomingHttpHeaders) => { status: number; headers?: Record<string, string> }) {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    const { status, headers } = answer(req.headers);
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end('{"balances":{"USD":0,"USDC":0}}');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const getBalance = TOOLS.find((tool) => tool.name === 'get_balance');
if (!getBalance) throw new Error('no get_balance tool');

describe('the stdio server’s HTTP calls', () => {
  it('refuse a redirect: the tool fails with a message saying so, and the target never sees the agent key', async () => {
    const elsewhere = await serve(() => ({ status: 200 }));
    const api = await serve(() => ({ status: 307, headers: { location: `${elsewhere.url}/api/v1/agents/balance` } }));
    const execute = overHttp(api.url, 'ag_live_secret');
    const error = await execute(getBalance, {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Refusal);
    expect((error as Refusal).message).toBe(
      `the API at ${api.url} answered with a redirect, which is not followed: set BASE_URL to the API's own address`,
    );
    expect(api.seen).toHaveLength(1);
    expect(elsewhere.seen).toHaveLength(0);
  });

  it('refuse every redirect status, each answered by the API itself and never followed', async () => {
    for (const status of [301, 302, 303, 307, 308]) {
      const elsewhere = await serve(() => ({ status: 200 }));
      const api = await serve(() => ({ status, headers: { location: `${elsewhere.url}/api/v1/agents/balance` } }));
      const error = await overHttp(api.url, 'ag_live_secret')(getBalance, {}).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect([status, (error as Refusal | undefined)?.code]).toEqual([status, 'apiRedirected']);
      expect(elsewhere.seen).toHaveLength(0);
    }
  });

  it('tell a redirect by the answer, not by an error text: a failure that mentions a redirect is an unreachable API', async () => {
    // A browser-style fetch hands a redirect back as an opaque answer (status 0): still a redirect.
    expect(isRedirect({ type: 'opaqueredirect', status: 0 })).toBe(true);
    expect(isRedirect({ type: 'basic', status: 304 })).toBe(false);
    const opaque = (async () => ({ type: 'opaqueredirect', status: 0, body: null })) as unknown as typeof fetch;
    await expect(overHttp('https://api.example.com', 'ag_live_k', opaque)(getBalance, {})).rejects.toMatchObject({ code: 'apiRedirected' });
    // A transport failure whose words happen to say "redirect" is what it is: the API was not reached.
    const failing = (async () => {
      throw new TypeError('fetch failed', { cause: new Error('unexpected redirect') });
    }) as unknown as typeof fetch;
    await expect(overHttp('https://api.example.com', 'ag_live_k', failing)(getBalance, {})).rejects.toMatchObject({
      code: 'apiUnreachable',
      message: 'the API at https://api.example.com is unreachable',
    });
  });

  it('speak plain http only to loopback; https anywhere', async () => {
    const api = await serve(() => ({ status: 200 }));
    expect(await overHttp(api.url, 'ag_live_k')(getBalance, {})).toEqual({ status: 200, text: '{"balances":{"USD":0,"USDC":0}}' });
    for (const ok of [
      'http://localhost:3000',
      'http://127.0.0.1:3000',
      'http://127.5.6.7',
      'http://[::1]:3000',
      'https://api.example.com/pay',
    ]) {
      expect(() => overHttp(ok, 'ag_live_k')).not.toThrow();
    }
    for (const bad of ['http://api.example.com', 'http://10.0.0.5:3000', 'http://localhost.example.com', 'ftp://127.0.0.1', 'not a url']) {
      expect(() => overHttp(bad, 'ag_live_k')).toThrow('BASE_URL must be https (plain http only to 127.0.0.1, ::1 or localhost)');
    }
  });
});
