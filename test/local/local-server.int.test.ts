/**
 * The local stand-ins' shared server helper (bin/local/local-server.ts), over real loopback HTTP.
 */
import { createServer } from 'node:net';
import { freePort, type LocalRequest, type LocalServer, PortInUseError, sendJson, startLocalServer } from '../../bin/local/local-server';
import { eventually } from '../support/eventually';

const servers: LocalServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function start(...args: Parameters<typeof startLocalServer>): Promise<LocalServer> {
  const server = await startLocalServer(...args);
  servers.push(server);
  return server;
}

describe('startLocalServer', () => {
  it('listens on 127.0.0.1 on a free port and hands the handler the read request', async () => {
    const seen: Omit<LocalRequest, 'raw'>[] = [];
    const server = await start((request, res) => {
      const { raw: _, ...rest } = request;
      seen.push(rest);
      sendJson(res, 201, { ok: true }, { 'x-extra': 'yes' });
    });

    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.port).toBeGreaterThan(0);
    const res = await fetch(`${server.url}/things/1?x=2`, { method: 'post', body: '{"a":1}' });

    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-extra')).toBe('yes');
    expect(await res.json()).toEqual({ ok: true });
    expect(seen).toEqual([{ method: 'POST', url: new URL('http://localhost/things/1?x=2'), body: '{"a":1}' }]);
  });

  it('answers 413 for a body over the limit, without calling the handler', async () => {
    const bodies: string[] = [];
    const server = await start(
      ({ body }, res) => {
        bodies.push(body);
        sendJson(res, 200, {});
      },
      { maxBodyBytes: 8 },
    );

    const res = await fetch(server.url, { method: 'POST', body: '123456789' });

    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: 'request body too large' });
    expect(bodies).toEqual([]);
    expect((await fetch(server.url, { method: 'POST', body: '12345678' })).status).toBe(200);
    expect(bodies).toEqual(['12345678']);
  });

  it("answers a stand-in's own 413 when it has one", async () => {
    const server = await start(() => undefined, {
      maxBodyBytes: 1,
      tooLarge: () => ({ status: 413, body: { name: 'TOO_BIG' }, headers: { 'x-why': 'size' } }),
    });

    const res = await fetch(server.url, { method: 'POST', body: 'xx' });

    expect(res.headers.get('x-why')).toBe('size');
    expect(await res.json()).toEqual({ name: 'TOO_BIG' });
  });

  it('turns a throw, sync or async, into a 500 JSON answer', async () => {
    const sync = await start(() => {
      throw new Error('boom');
    });
    const async = await start(async () => {
      throw new Error('boom');
    });

    for (const server of [sync, async]) {
      const res = await fetch(server.url);
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: 'internal error' });
    }
  });

  it("answers a throw with the stand-in's own error body, given the error", async () => {
    const internalError = jest.fn(() => ({ status: 500, body: { name: 'INTERNAL_SERVER_ERROR' } }));
    const failure = new Error('boom');
    const server = await start(
      () => {
        throw failure;
      },
      { internalError },
    );

    const res = await fetch(server.url);

    expect(await res.json()).toEqual({ name: 'INTERNAL_SERVER_ERROR' });
    expect(internalError).toHaveBeenCalledWith(failure);
  });

  it('stops promptly while a request it chose never to answer is still open', async () => {
    let received = false;
    const server = await startLocalServer(() => {
      received = true;
    });
    const pending = fetch(server.url).catch((error: unknown) => error);
    // Stopped once the request is open at the handler, not after a guessed while.
    await eventually('the request at the handler', () => received);

    await server.stop();

    // fetch's TypeError comes from another realm than the test's, so no toBeInstanceOf.
    expect(await pending).toHaveProperty('name', 'TypeError');
  });

  it('refuses a port that is taken with PortInUseError', async () => {
    const first = await start(() => undefined);

    await expect(startLocalServer(() => undefined, { port: first.port })).rejects.toEqual(new PortInUseError(first.port));
  });
});

describe('freePort', () => {
  it('gives a loopback port nothing listens on', async () => {
    const port = await freePort();

    const other = createServer();
    await new Promise<void>((resolve, reject) => {
      other.once('error', reject);
      other.listen(port, '127.0.0.1', resolve);
    });
    await new Promise((resolve) => other.close(resolve));
  });
});
