/**
 * The MCP server through the SDK's own Client, over both transports, against the local stack:
 * remote (streamable HTTP at POST /mcp, in-process use cases) and stdio (`bin/mcp.ts`, which calls
 * the HTTP API).
 */
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MCP_TOOL_NAMES } from '../../functions/registry/routes';
import { dynamoRequestCounts, resetDynamoRequestCounts } from '../../functions/store/client';
import { clearAuthCache } from '../../functions/use-cases/auth';
import { forgetPayers } from '../../functions/use-cases/charges/payer-cache';
import { auditAfterAll } from '../support/audit';
import { eventually } from '../support/eventually';
import { solanaWallet } from '../support/payouts';
import { startTestStack, type TestStack } from '../support/stack';
import { createTestTable } from '../support/table';

const ROOT = path.resolve(__dirname, '..', '..');
const WALLET = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

let t: TestStack;
const clients: Client[] = [];
beforeAll(async () => {
  await createTestTable();
  t = await startTestStack();
  // The wallet the withdraw tool pays has its USDC token account, as a wallet app makes it.
  t.stack.rails.solana.createTokenAccount(WALLET);
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await t.stack.stop();
});
auditAfterAll();

async function remote(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${t.stack.url}/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

async function stdio(agentKey: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: path.join(ROOT, 'node_modules', '.bin', 'tsx'),
      args: [path.join(ROOT, 'bin', 'mcp.ts')],
      env: { PATH: process.env.PATH ?? '', AGENT_KEY: agentKey, BASE_URL: t.stack.url },
      stderr: 'inherit',
    }),
  );
  clients.push(client);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const text = (result: CallToolResult) => (result.content[0]?.type === 'text' ? result.content[0].text : '');

describe('remote MCP server (POST /mcp)', () => {
  it('refuses an unknown key, a disabled agent and no key with 401 before any tool runs', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const accept = { accept: 'application/json, text/event-stream' };
    const disabled = await t.call<{ apiKey: string }>('POST', '/api/v1/agents/register', {
      body: { name: `mcp-disabled-${Date.now()}`, email: 'dev@example.com', website: 'https://example.com' },
    });
    const attempts: [Record<string, string>, string][] = [
      [{}, 'missing x-agent-key header'],
      [{ 'x-api-key': disabled.body.apiKey }, 'missing x-agent-key header'],
      [{ 'x-agent-key': 'ag_live_unknown' }, 'invalid or disabled agent key'],
      [{ authorization: `Bearer ${disabled.body.apiKey}` }, 'invalid or disabled agent key'],
    ];
    for (const [headers, error] of attempts) {
      const res = await t.call('POST', '/mcp', { headers: { ...accept, ...headers }, body: init });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error });
    }
    await expect(remote({ 'x-agent-key': 'ag_live_unknown' })).rejects.toThrow();
  });

  it("answers the transport's GET with 405 Allow: POST, so the SDK's client reports no error", async () => {
    const agent = await t.enabledAgent();
    const errors: Error[] = [];
    const gets: Promise<Response>[] = [];
    // The client opens its GET stream on its own after initializing: record it as it goes.
    const recording: typeof fetch = (input, init) => {
      const answer = fetch(input, init);
      if ((init?.method ?? 'GET') === 'GET') gets.push(answer);
      return answer;
    };
    const client = new Client({ name: 'test', version: '1.0.0' });
    client.onerror = (error) => errors.push(error);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.stack.url}/mcp`), {
        requestInit: { headers: { 'x-agent-key': agent.key } },
        fetch: recording,
      }),
    );
    clients.push(client);
    await eventually('the client to open its GET stream', () => gets.length > 0);
    const get = (await gets[0]) as Response;
    expect({ status: get.status, allow: get.headers.get('allow') }).toEqual({ status: 405, allow: 'POST' });
    // The client handles the answer in the same turn it arrives: an error would be reported by now.
    await new Promise(setImmediate);
    expect(errors).toEqual([]);
    expect((await client.listTools()).tools).toHaveLength(MCP_TOOL_NAMES.length);
    expect(errors).toEqual([]);

    // As any client sees it, with no key: the methods the path takes, and nothing read.
    const plain = await t.call('GET', '/mcp');
    expect({ status: plain.status, allow: plain.headers.get('allow'), body: plain.body }).toEqual({
      status: 405,
      allow: 'POST',
      body: { error: 'method not allowed: this MCP server takes POST only (stateless, no event stream)' },
    });
  });

  it('lists every agent tool with its annotations, and idempotency_key required on each that moves money', async () => {
    const agent = await t.enabledAgent();
    const client = await remote({ authorization: `Bearer ${agent.key}` });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      [
        'create_charge',
        'get_balance',
        'get_charge',
        'list_charges',
        'list_withdrawals',
        'withdraw',
        'capture_charge',
        'release_charge',
        'refund_charge',
        'request_grant',
        'get_grant_request',
        'x402_purchase',
        'x402_refund',
        'tab_open',
        'tab_use',
        'tab_close',
      ].sort(),
    );
    // get_grant_request changes one thing, once: its first read after approval claims the key. Its
    // argument names that request and a repeat changes nothing, so it needs no idempotency_key.
    // tab_close likewise: closing a closed tab answers it unchanged (docs/tabs.md).
    const keylessMutating = ['get_grant_request', 'tab_close'];
    for (const tool of tools) {
      expect(tool.annotations).toEqual(
        expect.objectContaining({ readOnlyHint: expect.any(Boolean), destructiveHint: expect.any(Boolean), idempotentHint: true }),
      );
      const mutating = tool.annotations?.readOnlyHint === false;
      expect([tool.name, tool.inputSchema.required?.includes('idempotency_key') ?? false]).toEqual([
        tool.name,
        mutating && !keylessMutating.includes(tool.name),
      ]);
    }
    for (const name of ['request_grant', 'get_grant_request']) {
      expect(tools.find((tool) => tool.name === name)?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    }
    const charge = tools.find((tool) => tool.name === 'create_charge');
    expect(charge?.inputSchema.properties?.amount).toEqual(expect.objectContaining({ type: 'number' }));
    expect(charge?.inputSchema.required).toEqual(expect.arrayContaining(['amount', 'currency', 'user_key', 'idempotency_key']));
  });

  it('charges, replays, refuses, and answers with the API messages as tool errors', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: '2.00' });
    const client = await remote({ 'x-agent-key': agent.key });
    const args = { amount: 1.5, currency: 'USD', description: 'via mcp', user_key: user.key, idempotency_key: 'mcp-c-1' };

    const first = await call(client, 'create_charge', args);
    expect(first.isError).toBeFalsy();
    expect(first.structuredContent).toEqual(expect.objectContaining({ amount: 1.5, currency: 'USD', status: 'SUCCESS' }));
    const again = await call(client, 'create_charge', args);
    expect(again.structuredContent).toEqual(first.structuredContent);

    const refusals: [Record<string, unknown>, string][] = [
      [{ ...args, idempotency_key: 'mcp-c-2' }, 'insufficient balance'],
      [{ ...args, amount: 1 }, 'idempotency key reused with different request'],
      [{ ...args, idempotency_key: 'mcp-c-3', amount: 0.001 }, 'amount has more than 2 decimal places for USD'],
      [{ ...args, idempotency_key: 'mcp-c-4', currency: 'EUR' }, 'currency must be one of USD, USDC'],
      [{ ...args, idempotency_key: 'mcp-c-5', user_key: 'uk_live_nobody' }, 'invalid user key'],
      [{ amount: 1, currency: 'USD', user_key: user.key }, 'idempotency_key is required'],
      [{ ...args, amount: '1.50' }, 'amount must be a number'],
    ];
    for (const [input, message] of refusals) {
      const result = await call(client, 'create_charge', input);
      expect({ isError: result.isError, text: text(result) }).toEqual({ isError: true, text: message });
    }
    const balance = await call(client, 'get_balance');
    expect(balance.structuredContent).toEqual({ balances: { USD: 1.5, USDC: 0 } });
    const missing = await call(client, 'get_charge', { charge_id: 'c00000000000000000000000000' });
    expect(text(missing)).toBe('charge not found');
  });

  it('holds, captures part, refunds and releases through the lifecycle tools, with the API messages as tool errors', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    const client = await remote({ 'x-agent-key': agent.key });
    const hold = await call(client, 'create_charge', {
      amount: 1,
      currency: 'USD',
      capture: false,
      holdSeconds: 600,
      user_key: user.key,
      idempotency_key: 'mcp-h-1',
    });
    expect(hold.structuredContent).toEqual(expect.objectContaining({ status: 'PENDING', pendingReason: 'capture', authorizedAmount: 1 }));
    const id = (hold.structuredContent as { id: string }).id;
    const over = await call(client, 'capture_charge', { charge_id: id, amount: 1.01, idempotency_key: 'mcp-cap-0' });
    expect({ isError: over.isError, text: text(over) }).toEqual({ isError: true, text: 'amount exceeds authorized amount' });
    const captured = await call(client, 'capture_charge', { charge_id: id, amount: 0.37, idempotency_key: 'mcp-cap-1' });
    expect(captured.structuredContent).toEqual(expect.objectContaining({ status: 'SUCCESS', amount: 0.37, authorizedAmount: 1 }));
    const refunded = await call(client, 'refund_charge', { charge_id: id, amount: 0.07, idempotency_key: 'mcp-ref-1' });
    expect(refunded.structuredContent).toEqual(expect.objectContaining({ status: 'SUCCESS', refundedAmount: 0.07 }));
    const noKey = await call(client, 'refund_charge', { charge_id: id });
    expect(text(noKey)).toBe('idempotency_key is required');
    const second = await call(client, 'create_charge', {
      amount: 2,
      currency: 'USD',
      capture: false,
      user_key: user.key,
      idempotency_key: 'mcp-h-2',
    });
    const secondId = (second.structuredContent as { id: string }).id;
    const released = await call(client, 'release_charge', { charge_id: secondId, idempotency_key: 'mcp-rel-1' });
    expect(released.structuredContent).toEqual(expect.objectContaining({ status: 'FAILED', failureReason: 'released by agent' }));
    const again = await call(client, 'release_charge', { charge_id: secondId, idempotency_key: 'mcp-rel-2' });
    expect(text(again)).toBe('charge is not pending');
    expect((await call(client, 'get_balance')).structuredContent).toEqual({ balances: { USD: 0.3, USDC: 0 } });
  });

  it('pages list_charges with the cursor', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    const client = await remote({ 'x-agent-key': agent.key });
    for (const i of [1, 2, 3]) {
      await call(client, 'create_charge', { amount: i, currency: 'USD', user_key: user.key, idempotency_key: `page-${i}` });
    }
    const seen: number[] = [];
    let cursor: string | undefined;
    do {
      const page = (await call(client, 'list_charges', { limit: 2, ...(cursor ? { cursor } : {}) })).structuredContent as {
        data: { amount: number }[];
        nextCursor: string | null;
      };
      seen.push(...page.data.map((c) => c.amount));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual([3, 2, 1]);
    expect(text(await call(client, 'list_charges', { limit: 101 }))).toBe('limit must be at most 100');
  });

  it('withdraws and follows the payout', async () => {
    const agent = await t.earningAgent({ USDC: 5 });
    const client = await remote({ 'x-agent-key': agent.key });
    const result = await call(client, 'withdraw', { amount: 2, currency: 'USDC', walletAddress: WALLET, idempotency_key: 'w-1' });
    const accepted = result.structuredContent as { payoutId: string; breakdown: { netAmount: number } };
    expect(accepted.breakdown.netAmount).toBe(1.94);
    const payout = (await call(client, 'list_withdrawals', { payout_id: accepted.payoutId })).structuredContent;
    expect(payout).toEqual(expect.objectContaining({ id: accepted.payoutId, amount: 2 }));
    const list = (await call(client, 'list_withdrawals', { limit: 5 })).structuredContent as { payouts: { id: string }[] };
    expect(list.payouts.map((p) => p.id)).toEqual([accepted.payoutId]);
    const refused = await call(client, 'withdraw', { amount: 1, currency: 'USDC', walletAddress: 'nope', idempotency_key: 'w-2' });
    expect(text(refused)).toBe('invalid solana address');
  });

  it('withdraws to a wallet without a USDC token account only with createTokenAccount, for the creation fee', async () => {
    const agent = await t.earningAgent({ USDC: 5 });
    const client = await remote({ 'x-agent-key': agent.key });
    const fresh = solanaWallet();
    const refused = await call(client, 'withdraw', { amount: 2, currency: 'USDC', walletAddress: fresh, idempotency_key: 'f-1' });
    expect({ isError: refused.isError, text: text(refused) }).toEqual({ isError: true, text: 'destination has no USDC token account' });
    const args = { amount: 2, currency: 'USDC', walletAddress: fresh, createTokenAccount: true, idempotency_key: 'f-2' };
    const accepted = (await call(client, 'withdraw', args)).structuredContent as { breakdown: Record<string, unknown> };
    expect(accepted.breakdown).toMatchObject({ grossAmount: 2, platformFee: 0.06, accountCreationFee: 0.5, netAmount: 1.44 });
  });

  it('adds no DynamoDB request to the endpoint a tool wraps (cold caches: one BatchGetItem, the payer read, one transaction)', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    const client = await remote({ 'x-agent-key': agent.key });

    clearAuthCache();
    forgetPayers();
    resetDynamoRequestCounts();
    await t.call('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': 'http-1' },
      body: { amount: 1, currency: 'USD' },
    });
    const overHttp = dynamoRequestCounts();
    expect(overHttp).toEqual({ BatchGetItemCommand: 1, GetItemCommand: 1, TransactWriteItemsCommand: 1 });

    clearAuthCache();
    forgetPayers();
    resetDynamoRequestCounts();
    await call(client, 'create_charge', { amount: 1, currency: 'USD', user_key: user.key, idempotency_key: 'mcp-1' });
    expect(dynamoRequestCounts()).toEqual(overHttp);

    resetDynamoRequestCounts();
    await call(client, 'get_balance');
    const viaMcp = dynamoRequestCounts();
    resetDynamoRequestCounts();
    await t.call('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': agent.key } });
    expect(viaMcp).toEqual(dynamoRequestCounts());
  });
});

describe('remote MCP server: bounds', () => {
  const accept = { accept: 'application/json, text/event-stream' };
  const charge = (userKey: string, i: number) => ({
    jsonrpc: '2.0',
    id: i,
    method: 'tools/call',
    params: { name: 'create_charge', arguments: { amount: 0.01, currency: 'USD', user_key: userKey, idempotency_key: `batch-${i}` } },
  });

  it('runs at most 10 messages of a JSON-RPC batch: 11 is a JSON-RPC error and no tool runs', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 1 });
    const headers = { ...accept, 'x-agent-key': agent.key };
    const eleven = await t.call('POST', '/mcp', { headers, body: Array.from({ length: 11 }, (_, i) => charge(user.key, i)) });
    expect(eleven.status).toBe(400);
    expect(eleven.body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid Request: at most 10 messages in one request' },
    });
    const none = await t.call<{ data: unknown[] }>('GET', '/api/v1/agents/charges', { headers: { 'x-agent-key': agent.key } });
    expect(none.body.data).toEqual([]);
    const ten = await t.call<unknown[]>('POST', '/mcp', { headers, body: Array.from({ length: 10 }, (_, i) => charge(user.key, i)) });
    expect(ten.status).toBe(200);
    expect(ten.body).toHaveLength(10);
  });

  it('answers 400 to a malformed Host header, before anything else', async () => {
    const agent = await t.enabledAgent();
    const url = new URL(t.stack.url);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    for (const host of ['bad host', 'a/b', '[::1', 'user@example.com', 'example.com:port']) {
      const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: '/mcp',
            method: 'POST',
            headers: {
              ...accept,
              host,
              'content-type': 'application/json',
              'x-agent-key': agent.key,
              'content-length': Buffer.byteLength(body),
            },
          },
          (r) => {
            const chunks: Buffer[] = [];
            r.on('data', (c: Buffer) => chunks.push(c));
            r.on('end', () => resolve({ status: r.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect([host, res.status, JSON.parse(res.text)]).toEqual([
        host,
        400,
        { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: malformed Host header' } },
      ]);
    }
  });
});

describe('stdio MCP server (npm run mcp)', () => {
  it('calls the HTTP API with the agent key and returns its answers and messages', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USDC: '1.000001' });
    const client = await stdio(agent.key);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([...MCP_TOOL_NAMES]);
    const charged = await call(client, 'create_charge', { amount: 1.000001, currency: 'USDC', user_key: user.key, idempotency_key: 's-1' });
    expect(charged.structuredContent).toEqual(expect.objectContaining({ amount: 1.000001, currency: 'USDC', status: 'SUCCESS' }));
    const poor = await call(client, 'create_charge', { amount: 1, currency: 'USDC', user_key: user.key, idempotency_key: 's-2' });
    expect({ isError: poor.isError, text: text(poor) }).toEqual({ isError: true, text: 'insufficient balance' });
    const got = await call(client, 'get_charge', { charge_id: (charged.structuredContent as { id: string }).id });
    expect(got.structuredContent).toEqual(charged.structuredContent);
    expect((await call(client, 'get_balance')).structuredContent).toEqual({ balances: { USD: 0, USDC: 1.000001 } });
    const list = (await call(client, 'list_charges', { limit: 1 })).structuredContent as { data: unknown[]; nextCursor: string | null };
    expect(list.data).toHaveLength(1);
    expect(list.nextCursor).not.toBeNull();
    // The lifecycle tools over HTTP: a hold of 0.5 captured in part, then refunded in full.
    const more = await t.fundedUser({ USD: 1 });
    const hold = await call(client, 'create_charge', {
      amount: 0.5,
      currency: 'USD',
      capture: false,
      user_key: more.key,
      idempotency_key: 's-h',
    });
    const holdId = (hold.structuredContent as { id: string }).id;
    const captured = await call(client, 'capture_charge', { charge_id: holdId, amount: 0.25, idempotency_key: 's-cap' });
    expect(captured.structuredContent).toEqual(expect.objectContaining({ status: 'SUCCESS', amount: 0.25, authorizedAmount: 0.5 }));
    const refunded = await call(client, 'refund_charge', { charge_id: holdId, idempotency_key: 's-ref' });
    expect(refunded.structuredContent).toEqual(expect.objectContaining({ refundedAmount: 0.25 }));
    const released = await call(client, 'release_charge', { charge_id: holdId, idempotency_key: 's-rel' });
    expect(text(released)).toBe('charge is not pending');
    // createTokenAccount travels in the HTTP body: 1 − 0.03 − 0.50 to a wallet whose account the payout creates.
    const withdrawn = await call(client, 'withdraw', {
      amount: 1,
      currency: 'USDC',
      walletAddress: solanaWallet(),
      createTokenAccount: true,
      idempotency_key: 's-w',
    });
    expect((withdrawn.structuredContent as { breakdown: unknown }).breakdown).toMatchObject({ accountCreationFee: 0.5, netAmount: 0.47 });
  }, 60_000);

  it('refuses a plain-http BASE_URL that is not loopback, at start, saying why', () => {
    const run = spawnSync(path.join(ROOT, 'node_modules', '.bin', 'tsx'), [path.join(ROOT, 'bin', 'mcp.ts')], {
      env: { PATH: process.env.PATH ?? '', AGENT_KEY: 'ag_live_whatever', BASE_URL: 'http://api.example.com' },
      encoding: 'utf8',
      input: '',
      timeout: 30_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('BASE_URL must be https (plain http only to 127.0.0.1, ::1 or localhost)');
  }, 60_000);

  it('reports a bad agent key as the API words it', async () => {
    const client = await stdio('ag_live_unknown');
    expect(text(await call(client, 'get_balance'))).toBe('invalid or disabled agent key');
  }, 60_000);
});

describe('grant requests over MCP (request_grant, get_grant_request)', () => {
  type GrantRequest = {
    id: string;
    status: string;
    consentUrl: string;
    expiresAt: string;
    grant: null | { id: string; key?: string; status: string; limits: Record<string, number> };
  };
  const pending = () => ({
    id: expect.stringMatching(/^gr01[0-9a-z]{24}$/),
    status: 'pending',
    consentUrl: expect.stringMatching(new RegExp(`^${t.stack.url}/consent/[A-Za-z0-9_-]{43}$`)),
    expiresAt: expect.any(String),
    grant: null,
  });

  /** The payer's answer on the consent page, posted as its form does (the 303 not followed). */
  async function decide(url: string, fields: Record<string, string>): Promise<number> {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
      redirect: 'manual',
    });
    await res.text();
    return res.status;
  }

  it('asks with request_grant, the payer allows on the consent page, and get_grant_request hands the key out once', async () => {
    const agent = await t.enabledAgent('mcp-grant-bot');
    const user = await t.fundedUser({ USD: 10 });
    const client = await remote({ 'x-agent-key': agent.key });
    const args = {
      currency: 'USD',
      limits: { perCharge: 5, total: 20.5 },
      approvalAbove: 2,
      ttlSeconds: 86_400,
      description: 'weather via mcp',
      idempotency_key: 'mcp-gr-1',
    };
    const asked = await call(client, 'request_grant', args);
    expect(asked.isError).toBeFalsy();
    const request = asked.structuredContent as GrantRequest;
    expect(request).toEqual(pending());
    // A retry with the same key answers the same request and link; nothing new is asked.
    expect((await call(client, 'request_grant', args)).structuredContent).toEqual(request);
    expect((await call(client, 'get_grant_request', { request_id: request.id })).structuredContent).toEqual(request);

    // Refusals carry the API's own messages: the same body over HTTP is refused in the same words.
    const overHttp = await t.call<{ error: string }>('POST', '/api/v1/agents/grant-requests', {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': 'http-gr-bad' },
      body: { currency: 'USD', limits: { perCharge: 0.001 } },
    });
    expect(overHttp.status).toBe(400);
    const refusals: [Record<string, unknown>, string][] = [
      [{ ...args, currency: 'USDC' }, 'idempotency key reused with different request'],
      [{ currency: 'USD' }, 'idempotency_key is required'],
      [{ ...args, idempotency_key: 'mcp-gr-2', ttlSeconds: 10 }, 'ttlSeconds must be at least 60'],
      [{ ...args, idempotency_key: 'mcp-gr-3', limits: { perCharge: 0.001 } }, overHttp.body.error],
      [{ ...args, idempotency_key: 'mcp-gr-4', limits: { weekly: 1 } }, 'unknown field: limits.weekly'],
      [{ ...args, idempotency_key: 'mcp-gr-5', currency: 'EUR' }, 'currency must be one of USD, USDC'],
    ];
    for (const [input, message] of refusals) {
      const result = await call(client, 'request_grant', input);
      expect({ isError: result.isError, text: text(result) }).toEqual({ isError: true, text: message });
    }
    // Another agent's request does not exist for it.
    const other = await remote({ 'x-agent-key': (await t.enabledAgent()).key });
    expect(text(await call(other, 'get_grant_request', { request_id: request.id }))).toBe('grant request not found');

    expect(await decide(request.consentUrl, { action: 'allow', accountKey: user.key })).toBe(303);
    // Concurrent first polls: exactly one carries the key, and every one shows the request claimed.
    const reads = await Promise.all(Array.from({ length: 4 }, () => call(client, 'get_grant_request', { request_id: request.id })));
    const polled = reads.map((read) => read.structuredContent as GrantRequest);
    for (const body of polled) {
      expect(body).toMatchObject({
        id: request.id,
        status: 'claimed',
        grant: {
          status: 'active',
          agent: { id: agent.id, name: 'mcp-grant-bot' },
          currency: 'USD',
          limits: { perCharge: 5, total: 20.5 },
          approvalAbove: 2,
          description: 'weather via mcp',
          spent: 0,
        },
      });
    }
    const withKey = polled.filter((body) => body.grant?.key !== undefined);
    expect(withKey).toHaveLength(1);
    const grantKey = withKey[0]?.grant?.key as string;
    expect(grantKey).toMatch(/^ug_live_/);
    const later = await call(client, 'get_grant_request', { request_id: request.id });
    expect((later.structuredContent as GrantRequest).grant?.key).toBeUndefined();
    expect(text(later)).not.toContain('ug_live_');

    // The grant is the payer's, and its key is no account key.
    const listed = await t.call<{ data: { id: string }[] }>('GET', '/api/v1/users/me/grants', { headers: { 'x-user-key': user.key } });
    expect(listed.body.data.map((grant) => grant.id)).toEqual([withKey[0]?.grant?.id]);
    expect((await t.call('GET', '/api/v1/users/me', { headers: { 'x-user-key': grantKey } })).status).toBe(401);
  });

  it('shows a denied request as denied, and adds no DynamoDB request to the endpoints the tools wrap', async () => {
    const agent = await t.enabledAgent();
    const client = await remote({ 'x-agent-key': agent.key });
    const headers = { 'x-agent-key': agent.key };
    await call(client, 'get_balance'); // the agent is in the auth cache from here on, for both paths alike

    resetDynamoRequestCounts();
    const viaMcp = (await call(client, 'request_grant', { currency: 'USDC', idempotency_key: 'mcp-gr-cost' }))
      .structuredContent as GrantRequest;
    const askCost = dynamoRequestCounts();
    resetDynamoRequestCounts();
    const viaHttp = await t.call<GrantRequest>('POST', '/api/v1/agents/grant-requests', {
      headers: { ...headers, 'idempotency-key': 'http-gr-cost' },
      body: { currency: 'USDC' },
    });
    expect(viaHttp.status).toBe(201);
    expect(dynamoRequestCounts()).toEqual(askCost);

    resetDynamoRequestCounts();
    await call(client, 'get_grant_request', { request_id: viaMcp.id });
    const pollCost = dynamoRequestCounts();
    resetDynamoRequestCounts();
    await t.call('GET', `/api/v1/agents/grant-requests/${viaMcp.id}`, { headers });
    expect(dynamoRequestCounts()).toEqual(pollCost);

    expect(await decide(viaMcp.consentUrl, { action: 'deny' })).toBe(303);
    const denied = await call(client, 'get_grant_request', { request_id: viaMcp.id });
    expect(denied.structuredContent).toMatchObject({ id: viaMcp.id, status: 'denied', grant: null });
    expect(text(await call(client, 'get_grant_request', { request_id: 'nope' }))).toBe('grant request not found');
  });

  it('over stdio: asks through the HTTP API (amounts as their exact literals) and takes the key once', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser();
    const client = await stdio(agent.key);
    const args = { currency: 'USDC', limits: { daily: 1.000001 }, idempotency_key: 's-gr-1' };
    const request = (await call(client, 'request_grant', args)).structuredContent as GrantRequest;
    expect(request).toEqual(pending());
    expect((await call(client, 'request_grant', args)).structuredContent).toEqual(request);
    const refused = await call(client, 'request_grant', { ...args, idempotency_key: 's-gr-2', limits: { daily: 1.0000001 } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^limits\.daily /);

    expect(await decide(request.consentUrl, { action: 'allow', accountKey: user.key })).toBe(303);
    const first = (await call(client, 'get_grant_request', { request_id: request.id })).structuredContent as GrantRequest;
    expect(first).toMatchObject({ status: 'claimed', grant: { status: 'active', limits: { daily: 1.000001 } } });
    expect(first.grant?.key).toMatch(/^ug_live_/);
    const second = await call(client, 'get_grant_request', { request_id: request.id });
    expect((second.structuredContent as GrantRequest).grant).toEqual({ ...first.grant, key: undefined });
    expect(text(second)).not.toContain('ug_live_');
  }, 60_000);
});
