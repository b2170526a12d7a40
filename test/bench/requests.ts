/**
 * DynamoDB requests per operation, per endpoint, cold and warm. Each request is made by calling
 * the route's real handler (the very module the local stack serves) with the API Gateway event
 * the adapter would build, inside an AsyncLocalStorage scope; a middleware on the shared clients
 * counts only commands sent from that scope, so the payout worker or reconciler running in the
 * same process can never be miscounted as an endpoint's cost. The process-wide counter of
 * functions/store/client.ts is read too and reported beside it.
 *
 * Cold = a new container: auth and admin-key caches empty. Warm = the same container again.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { x402Client } from '@x402/fetch';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import bs58 from 'bs58';
import { payTransferRequest } from '../../bin/local/solana-pay';
import { handlerEntry, ROUTES } from '../../functions/api/routes';
import { newChargeId } from '../../functions/core/ids';
import { hashKey } from '../../functions/core/keys';
import type { RouteHandler } from '../../functions/http/handler';
import { sqs } from '../../functions/queue/payout-queue';
import { SolanaDepositsClient } from '../../functions/rails/solana.deposits';
import { db, dynamoRequestCounts, resetDynamoRequestCounts } from '../../functions/store/client';
import { outboxPut } from '../../functions/store/events/outbox';
import { transactWrite } from '../../functions/store/transact';
import { resetAdminKey } from '../../functions/use-cases/admin-key';
import { clearAuthCache } from '../../functions/use-cases/auth';
import { expireDueCharges } from '../../functions/use-cases/charges/expiry';
import { chargeEvents } from '../../functions/use-cases/events/events';
import { startSession } from '../../functions/use-cases/identity/console-sessions';
import { STATEMENT_ROWS_PER_QUERY } from '../../functions/use-cases/identity/statement';
import { createWatcher } from '../../functions/use-cases/topups/topup-watch';
import { startStockSeller } from '../x402/stock-seller';
import { type BenchContext, enabledAgent, fundedUser, type Party } from './context';
import {
  CONSOLE_OVERVIEW_ENDPOINT,
  GRANT_CHARGE_CASE,
  OUTBOX_ENDPOINT,
  POLICY_CHARGE_CASE,
  STATEMENT_ENDPOINT,
  SWEEPER_ENDPOINT,
  X402_PURCHASE_CASE,
  X402_PURCHASE_ENDPOINT,
  X402_SETTLE_CASE,
  X402_SETTLE_ENDPOINT,
} from './cost';
import { type TouchedItem, touchedBy } from './written';

export interface RequestCount {
  endpoint: string;
  /** What the request exercised, e.g. "201 created" or "replay". */
  case: string;
  state: 'cold' | 'warm';
  status: number;
  /** DynamoDB commands sent by this request, by name (without the `Command` suffix). */
  dynamo: Record<string, number>;
  reads: number;
  writes: number;
  /** SQS commands sent by this request. */
  sqs: number;
  itemsRead: number;
  readUnits: number;
  writeUnits: number;
  /** The process-wide counter of functions/store/client.ts over the same request. */
  processWide: number;
}

const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

export interface Scope {
  dynamo: Map<string, number>;
  sqs: number;
  /** Items the reads returned (Query/Scan: items examined). */
  itemsRead: number;
  /** Capacity units DynamoDB Local reports (ReturnConsumedCapacity=TOTAL is added in scope). */
  readUnits: number;
  writeUnits: number;
  /** The items (and their partitions) every write sent from this scope touched, read from the requests (written.ts). */
  touched: TouchedItem[];
  /**
   * When set, writes are not sent: each write command's input is kept here and answered with an
   * empty success (`capturedWrites`), so store code shows what it would send.
   */
  captured?: CapturedWrite[];
}

export interface CapturedWrite {
  /** Without the `Command` suffix, e.g. `TransactWriteItems`. */
  command: string;
  /** As the document client took it (not marshalled). */
  input: Record<string, unknown>;
}

export function newScope(): Scope {
  return { dynamo: new Map(), sqs: 0, itemsRead: 0, readUnits: 0, writeUnits: 0, touched: [] };
}

function units(consumed: unknown): number {
  const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
  return list.reduce((a: number, c: { CapacityUnits?: number }) => a + (c.CapacityUnits ?? 0), 0);
}

function itemsIn(output: Record<string, unknown>): number {
  if (typeof output.ScannedCount === 'number') return output.ScannedCount;
  if (typeof output.Count === 'number') return output.Count;
  if (output.Item) return 1;
  if (output.Responses && typeof output.Responses === 'object') {
    return Object.values(output.Responses as Record<string, unknown[]>).reduce((a, r) => a + (Array.isArray(r) ? r.length : 0), 0);
  }
  return 0;
}

const scope = new AsyncLocalStorage<Scope>();
let installed = false;

/** Adds the scope-aware counters to the shared DynamoDB and SQS clients (once per client). */
export function installScopedCounters(): void {
  if (installed) return;
  installed = true;
  db().middlewareStack.add(
    (next, context) => async (args) => {
      const s = scope.getStore();
      if (!s) return next(args);
      const name = (context.commandName ?? 'unknown').replace(/Command$/, '');
      const input = args.input as Record<string, unknown>;
      // What a captured write would touch is not asked of a capture scope: the raw baseline builds
      // its charge in one, and this work is the bench's, not the service's (up to 0.25 ms a charge).
      if (WRITES.has(name) && !s.captured) s.touched.push(...touchedBy(name, input));
      if (s.captured && WRITES.has(name)) {
        // Not sent: the document client's form of the request, before it is marshalled.
        s.captured.push({ command: name, input });
        return { output: { $metadata: {} } } as Awaited<ReturnType<typeof next>>;
      }
      s.dynamo.set(name, (s.dynamo.get(name) ?? 0) + 1);
      input.ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const output = result.output as Record<string, unknown>;
      if (READS.has(name)) {
        s.itemsRead += itemsIn(output);
        s.readUnits += units(output.ConsumedCapacity);
      } else if (WRITES.has(name)) s.writeUnits += units(output.ConsumedCapacity);
      return result;
    },
    { step: 'initialize', name: 'benchScopedDynamoCount' },
  );
  sqs().middlewareStack.add(
    (next) => (args) => {
      const s = scope.getStore();
      if (s) s.sqs += 1;
      return next(args);
    },
    { step: 'initialize', name: 'benchScopedSqsCount' },
  );
}

const handlers = new Map<string, RouteHandler>();

async function routeHandler(name: string): Promise<RouteHandler> {
  let h = handlers.get(name);
  if (!h) {
    const spec = ROUTES.find((r) => r.name === name);
    if (!spec) throw new Error(`no route ${name}`);
    h = ((await import(`../../${handlerEntry(spec).replace(/\.ts$/, '')}`)) as { handler: RouteHandler }).handler;
    handlers.set(name, h);
  }
  return h;
}

/** The API Gateway HTTP API (v2) event for a request, as the local adapter builds it. */
export function apiEvent(
  method: string,
  routePath: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: string; query?: Record<string, string>; params?: Record<string, string> } = {},
): APIGatewayProxyEventV2 {
  const now = new Date();
  const headers = Object.fromEntries(Object.entries(opts.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  if (opts.body !== undefined) headers['content-type'] ??= 'application/json';
  const routeKey = `${method} ${routePath}`;
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: new URLSearchParams(opts.query ?? {}).toString(),
    headers,
    ...(opts.query ? { queryStringParameters: opts.query } : {}),
    ...(opts.params ? { pathParameters: opts.params } : {}),
    ...(opts.body !== undefined ? { body: opts.body } : {}),
    isBase64Encoded: false,
    requestContext: {
      accountId: 'bench',
      apiId: 'bench',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'bench' },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
  };
}

interface Invocation {
  route: string;
  event: APIGatewayProxyEventV2;
}

export interface Counted {
  status: number;
  body: string;
  scope: Scope;
  processWide: number;
  ms: number;
}

/** Calls a route's handler with `event` and counts what it sent to DynamoDB and SQS. */
export async function invokeCounted(route: string, event: APIGatewayProxyEventV2, cold = false): Promise<Counted> {
  installScopedCounters();
  if (cold) {
    clearAuthCache();
    resetAdminKey();
  }
  const handler = await routeHandler(route);
  const s = newScope();
  resetDynamoRequestCounts();
  const t0 = performance.now();
  const res = (await scope.run(s, () => handler(event))) as APIGatewayProxyStructuredResultV2;
  const ms = performance.now() - t0;
  const processWide = Object.values(dynamoRequestCounts()).reduce((a, b) => a + b, 0);
  return { status: res.statusCode ?? 0, body: String(res.body ?? ''), scope: s, processWide, ms };
}

/**
 * Runs `fn` (store code) with its writes kept instead of sent: what it would send, in order.
 * Reads are still sent and counted.
 */
export async function capturedWrites(fn: () => Promise<unknown>): Promise<CapturedWrite[]> {
  installScopedCounters();
  const s: Scope = { ...newScope(), captured: [] };
  await scope.run(s, fn);
  return s.captured ?? [];
}

/** Runs `fn` (any in-process work, not a route) inside a counting scope. */
export async function countedRun<T>(fn: () => Promise<T>): Promise<{ value: T; scope: Scope }> {
  installScopedCounters();
  const s = newScope();
  const value = await scope.run(s, fn);
  return { value, scope: s };
}

function countOf(endpoint: string, label: string, state: 'cold' | 'warm', status: number, s: Scope, processWide: number): RequestCount {
  const dynamo = Object.fromEntries([...s.dynamo.entries()].sort());
  const sum = (set: Set<string>) => [...s.dynamo.entries()].filter(([n]) => set.has(n)).reduce((a, [, v]) => a + v, 0);
  return {
    endpoint,
    case: label,
    state,
    status,
    dynamo,
    reads: sum(READS),
    writes: sum(WRITES),
    sqs: s.sqs,
    itemsRead: s.itemsRead,
    readUnits: s.readUnits,
    writeUnits: s.writeUnits,
    processWide,
  };
}

async function measure(endpoint: string, label: string, state: 'cold' | 'warm', inv: Invocation, expect: number): Promise<RequestCount> {
  const { status, body, scope: s, processWide } = await invokeCounted(inv.route, inv.event, state === 'cold');
  if (status !== expect) throw new Error(`${endpoint} (${label}, ${state}) answered ${status}, expected ${expect}: ${body}`);
  return countOf(endpoint, label, state, status, s, processWide);
}

const json = (value: unknown) => JSON.stringify(value);

/**
 * A policy with a per-charge, a daily and a monthly limit (user-wide and for the agent) and an
 * approval threshold the measured 1.25 USD stays below: every condition a 201 can carry.
 */
export const benchPolicy = (agentId: string) => ({
  perCharge: { USD: 50 },
  daily: { USD: 500 },
  monthly: { USD: 5000 },
  approvalAbove: { USD: 100 },
  agents: { [agentId]: { daily: { USD: 400 } } },
});

export const chargeEvent = (agent: Party, user: Party, key: string, amount = '1.25') =>
  apiEvent('POST', '/api/v1/agents/charges', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': key },
    body: `{"amount":${amount},"currency":"USD","description":"bench"}`,
  });

/**
 * One warm 201 charge made with a grant key (limits on every window, so each counter is
 * conditioned), after an unmeasured one that warms the container's cache of that grant key.
 */
export async function warmGrantCharge(ctx: BenchContext): Promise<RequestCount> {
  const agent = await enabledAgent(ctx);
  const user = await fundedUser(ctx, { USD: '1000' });
  const res = await ctx.call(
    'POST',
    '/api/v1/users/me/grants',
    { 'x-user-key': user.key },
    json({ agentId: agent.id, currency: 'USD', limits: { perCharge: 100, daily: 500, monthly: 900, total: 1000 } }),
  );
  if (res.status !== 201) throw new Error(`grant refused: ${res.status} ${res.body}`);
  const grant: Party = { id: user.id, key: (JSON.parse(res.body) as { key: string }).key };
  const tag = `gc-${Date.now()}`;
  await measure(
    'POST /api/v1/agents/charges',
    'seed',
    'warm',
    { route: 'create-charge', event: chargeEvent(agent, grant, `${tag}-seed`) },
    201,
  );
  return measure(
    'POST /api/v1/agents/charges',
    GRANT_CHARGE_CASE,
    'warm',
    { route: 'create-charge', event: chargeEvent(agent, grant, tag) },
    201,
  );
}

/**
 * One warm x402 settle (DESIGN §17) of a new payment the local chain's demo payer signs with the
 * stock client scheme, credited to the agent, after an unmeasured settle that warms the container
 * (its facilitator and the agent's key). Chain calls are not DynamoDB requests: only the table's
 * are counted (the claim looked up, the claim, the credit's one transaction, and whatever else the
 * settle sends).
 */
export async function warmX402Settle(ctx: BenchContext): Promise<RequestCount> {
  const { solana } = ctx.stack.rails;
  const agent = await enabledAgent(ctx);
  const signer = await createKeyPairSignerFromBytes(bs58.decode(solana.demoPayer.secretKey));
  const buyer = new x402Client().register('solana:*', new ExactSvmClient(signer, { rpcUrl: solana.url }));
  const settle = async (): Promise<Invocation> => {
    // A new blockhash, so each payment is its own transaction (the local chain makes one only when a transaction lands).
    solana.expireBlockhash();
    const payload = await buyer.createPaymentPayload({
      x402Version: 2,
      resource: { url: 'https://seller.example.com/bench', description: 'bench', mimeType: 'application/json' },
      accepts: [
        {
          scheme: 'exact',
          network: solana.network as `${string}:${string}`,
          amount: '10000',
          asset: solana.mint,
          payTo: solana.hotWallet.publicKey,
          maxTimeoutSeconds: 60,
          // The agent's seller memo (GET /api/v1/agents/x402), as its middleware sends it.
          extra: { feePayer: solana.hotWallet.publicKey, memo: `x402:${agent.id}` },
        },
      ],
    });
    return {
      route: 'x402-settle',
      event: apiEvent('POST', '/x402/settle', '/x402/settle', {
        headers: { 'x-agent-key': agent.key },
        body: json({ x402Version: 2, paymentPayload: payload, paymentRequirements: payload.accepted }),
      }),
    };
  };
  const credited = async (label: string) => {
    const inv = await settle();
    const counted = await invokeCounted(inv.route, inv.event);
    // A refused payment is a 200 too (success:false): only a credited one is the row.
    if (counted.status !== 200 || (JSON.parse(counted.body) as { success?: unknown }).success !== true) {
      throw new Error(`x402 settle (${label}) answered ${counted.status}: ${counted.body}`);
    }
    return countOf(X402_SETTLE_ENDPOINT, label, 'warm', counted.status, counted.scope, counted.processWide);
  };
  await credited('seed');
  return credited(X402_SETTLE_CASE);
}

/**
 * One warm x402 purchase (DESIGN §22) under a grant key, below the approval threshold (neither the
 * grant nor the payer has one): the hold (the charge's one transaction), the hold read back, and
 * the payment's record, after an unmeasured purchase that warms the container (its keys, the
 * payer's state, the hot wallet's signer). The requirements are a stock `@x402/express` seller's
 * 402 on the local chain (test/x402/stock-seller.ts, as test/x402/purchases-stock.e2e.test.ts buys
 * from it), read with the stock header decoder. Nothing is sent to the seller: only the table's
 * requests are counted, not the chain's; both payments expire unsent (the reconciler releases them).
 */
export async function warmX402Purchase(ctx: BenchContext): Promise<RequestCount> {
  const { solana } = ctx.stack.rails;
  const seller = await startStockSeller(solana, '$0.01');
  try {
    const agent = await enabledAgent(ctx);
    const user = await fundedUser(ctx, { USDC: '1' });
    const res = await ctx.call(
      'POST',
      '/api/v1/users/me/grants',
      { 'x-user-key': user.key },
      json({ agentId: agent.id, currency: 'USDC', limits: { total: 5 } }),
    );
    if (res.status !== 201) throw new Error(`grant refused: ${res.status} ${res.body}`);
    const grantKey = (JSON.parse(res.body) as { key: string }).key;
    const resource = `${seller.url}/weather`;
    const purchase = async (label: string) => {
      // A new blockhash, so each payment is its own transaction (the local chain makes one only when a transaction lands).
      solana.advanceBlocks(1);
      const offered = await fetch(resource);
      if (offered.status !== 402) throw new Error(`the seller answered ${offered.status}, not 402`);
      const [requirements] = decodePaymentRequiredHeader(offered.headers.get('payment-required') ?? '').accepts;
      const path = '/api/v1/agents/x402/purchases';
      const counted = await invokeCounted(
        'agent-x402-purchase-create',
        apiEvent('POST', path, path, {
          headers: { 'x-agent-key': agent.key, 'x-user-key': grantKey, 'idempotency-key': `xp-${label}-${randomUUID()}` },
          body: json({ x402Version: 2, paymentRequirements: requirements, resource: { url: resource } }),
        }),
      );
      if (counted.status !== 201) throw new Error(`x402 purchase (${label}) answered ${counted.status}: ${counted.body}`);
      return countOf(X402_PURCHASE_ENDPOINT, label, 'warm', counted.status, counted.scope, counted.processWide);
    };
    await purchase('seed');
    return await purchase(X402_PURCHASE_CASE);
  } finally {
    // Neither payment was sent: they expire once their blockhash has.
    solana.expireBlockhash();
    await seller.close();
  }
}

async function putPolicy(ctx: BenchContext, user: Party, policy: unknown): Promise<void> {
  const res = await ctx.call('PUT', '/api/v1/users/me/policy', { 'x-user-key': user.key }, json(policy));
  if (res.status !== 200) throw new Error(`policy refused: ${res.status} ${res.body}`);
}

/**
 * One warm 201 charge without a policy and one by a payer with limits (benchPolicy), same agent,
 * same amount, each after an unmeasured charge that warms the container's caches for that payer
 * (its key, its policy version and its counters' periods).
 */
export async function warmChargePair(ctx: BenchContext): Promise<{ plain: RequestCount; policy: RequestCount }> {
  const agent = await enabledAgent(ctx);
  const plainUser = await fundedUser(ctx, { USD: '1000' });
  const limited = await fundedUser(ctx, { USD: '1000' });
  await putPolicy(ctx, limited, benchPolicy(agent.id));
  const tag = `pc-${Date.now()}`;
  const rows: RequestCount[] = [];
  for (const [user, label] of [
    [plainUser, 'created (201)'],
    [limited, POLICY_CHARGE_CASE],
  ] as const) {
    await measure(
      'POST /api/v1/agents/charges',
      'seed',
      'warm',
      { route: 'create-charge', event: chargeEvent(agent, user, `${tag}-seed-${user.id}`) },
      201,
    );
    rows.push(
      await measure(
        'POST /api/v1/agents/charges',
        label,
        'warm',
        { route: 'create-charge', event: chargeEvent(agent, user, `${tag}-${user.id}`) },
        201,
      ),
    );
  }
  const [plain, policy] = rows as [RequestCount, RequestCount];
  return { plain, policy };
}

/**
 * The expiry sweeper's cost for `due` PENDING charges (approvalWindowSeconds 60, run as if 61 s
 * had passed): what one `expireDueCharges` run sends to DynamoDB.
 */
export async function sweeperCost(ctx: BenchContext, due = 3): Promise<RequestCount> {
  const agent = await enabledAgent(ctx);
  const user = await fundedUser(ctx, { USD: '100' });
  await putPolicy(ctx, user, { approvalAbove: { USD: 1 }, approvalWindowSeconds: 60 });
  const tag = `sw-${Date.now()}`;
  for (let i = 0; i < due; i++) {
    const res = await ctx.call(
      'POST',
      '/api/v1/agents/charges',
      { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `${tag}-${i}` },
      '{"amount":2,"currency":"USD","description":"to expire"}',
    );
    if (res.status !== 202) throw new Error(`pending charge answered ${res.status}: ${res.body}`);
  }
  const { value: report, scope: s } = await countedRun(() => expireDueCharges(new Date(Date.now() + 61_000)));
  if (report.expired < due) throw new Error(`the sweeper expired ${report.expired} of ${due}: ${json(report)}`);
  return countOf(SWEEPER_ENDPOINT, `${report.expired} due charges`, 'warm', 0, s, 0);
}

/** The requests-table row of one USDC top-up credited by a watcher run (docs/topups.md). */
export const TOPUP_CREDIT_ENDPOINT = 'top-up watcher run';

/**
 * One completed USDC top-up: a top-up opened over HTTP, paid with a real signed transfer by the
 * local chain's demo payer, then one watcher run counted (DynamoDB requests; its Solana RPC calls
 * go in the case label). Other work is settled by an unmeasured run first, so the run sees one
 * pending top-up and one new deposit signature.
 */
export async function topupCreditCost(ctx: BenchContext): Promise<RequestCount> {
  const user = await fundedUser(ctx, {});
  const watch = createWatcher();
  await watch();
  const opened = await ctx.call('POST', '/api/v1/users/me/topups', { 'x-user-key': user.key }, '{"currency":"USDC"}');
  if (opened.status !== 201) throw new Error(`top-up answered ${opened.status}: ${opened.body}`);
  const { solana } = ctx.stack.rails;
  await payTransferRequest({
    rpcUrl: solana.url,
    payerSecret: solana.demoPayer.secretKey,
    solanaPayUrl: (JSON.parse(opened.body) as { solanaPayUrl: string }).solanaPayUrl,
    amount: '1.25',
  });
  const rpc = new SolanaDepositsClient(async () => solana.url);
  const { value: report, scope: s } = await countedRun(() => createWatcher({ solana: rpc })());
  if (report.completed !== 1) throw new Error(`the watcher completed ${report.completed} top-ups: ${json(report)}`);
  return countOf(TOPUP_CREDIT_ENDPOINT, `1 USDC credit, ${report.rpcCalls} RPC calls`, 'warm', 0, s, 0);
}

/**
 * What the webhook outbox adds to a state change's transaction: one more item, here a charge's
 * charge.succeeded for its agent and its user (the largest common case), written alone in a
 * TransactWriteItems so its write units show on their own (2 per KB, transactional).
 */
export async function outboxCost(agentId: string, userId: string): Promise<RequestCount> {
  const charge = {
    id: newChargeId(agentId),
    agentId,
    userId,
    idempotencyKey: randomUUID(),
    amount: 125,
    currency: 'USD' as const,
    description: 'bench',
    status: 'SUCCESS' as const,
    createdAt: new Date().toISOString(),
    agentName: 'bench agent',
  };
  const put = outboxPut(chargeEvents(charge));
  if (!put) throw new Error('no outbox item');
  const { scope: s } = await countedRun(() => transactWrite([put]));
  return countOf(OUTBOX_ENDPOINT, 'charge.succeeded × (agent, user)', 'warm', 0, s, 0);
}

/**
 * The console's Overview (DESIGN §21: at most 3 DynamoDB requests, the session's read included),
 * one signed-in GET /console by `user`, cold and warm: the session, the payer's item, one Query of
 * their newest charges. The session is fresh, so its activity mark is not due (it is written at
 * most once a minute, on whichever page comes then).
 */
export async function consoleOverviewCost(user: Party): Promise<RequestCount[]> {
  const session = await startSession(user.id, new Date(), { openedBy: { kind: 'accountKey', keyHash: hashKey(user.key) } });
  const event = apiEvent('ANY', '/console', '/console', { headers: { cookie: `console=${session.cookieValue}` } });
  event.requestContext.http.method = 'GET';
  const rows: RequestCount[] = [];
  for (const state of ['cold', 'warm'] as const) {
    rows.push(await measure(CONSOLE_OVERVIEW_ENDPOINT, 'signed in', state, { route: 'console', event }, 200));
  }
  return rows;
}

/**
 * The console's Security page (DESIGN §21's budget of 3; docs/console.md "What a Security page
 * costs"), one signed-in GET /console/security by `user`, cold and warm, with `others` more
 * sessions of theirs open elsewhere: the session, the passkeys' Query, the sessions' Query, and a
 * BatchGetItem of the other sessions' items only when there are any (the asking one was just read).
 */
export async function consoleSecurityCost(user: Party, others = 0): Promise<RequestCount[]> {
  const opener = { openedBy: { kind: 'accountKey' as const, keyHash: hashKey(user.key) } };
  const session = await startSession(user.id, new Date(), opener);
  for (let i = 0; i < others; i++) await startSession(user.id, new Date(), opener);
  const event = apiEvent('ANY', '/console/{proxy+}', '/console/security', { headers: { cookie: `console=${session.cookieValue}` } });
  event.requestContext.http.method = 'GET';
  const rows: RequestCount[] = [];
  for (const state of ['cold', 'warm'] as const) {
    rows.push(await measure('GET /console/security', `${others} other sessions`, state, { route: 'console', event }, 200));
  }
  return rows;
}

/**
 * Any signed-in console page (DESIGN §21's budget of 3), one GET of `path` (with `query`) by
 * `user`, cold and warm, on a fresh session (its activity mark not due): what the Statement and
 * Limits pages cost (docs/console.md "What the Statement and Limits pages cost").
 */
export async function consolePageCost(user: Party, path: string, query?: Record<string, string>): Promise<RequestCount[]> {
  const session = await startSession(user.id, new Date(), { openedBy: { kind: 'accountKey', keyHash: hashKey(user.key) } });
  const event = apiEvent('ANY', '/console/{proxy+}', path, {
    headers: { cookie: `console=${session.cookieValue}` },
    ...(query ? { query } : {}),
  });
  event.requestContext.http.method = 'GET';
  const rows: RequestCount[] = [];
  for (const state of ['cold', 'warm'] as const)
    rows.push(await measure(`GET ${path}`, 'signed in', state, { route: 'console', event }, 200));
  return rows;
}

/**
 * The payer's statement (DESIGN §26, docs/statement.md), the rows behind `bench: statement page
 * requests N`: a payer with a history longer than one Query reads when filtered
 * (STATEMENT_ROWS_PER_QUERY), then page 1 (cold and warm), a page filtered by a type no row has
 * (it reads until the budget runs out: the balance's GetItem and two Queries), and the page after a
 * cursor (no GetItem).
 */
export async function statementPageCost(ctx: BenchContext): Promise<RequestCount[]> {
  const agent = await enabledAgent(ctx);
  const user = await fundedUser(ctx, { USD: '100' });
  for (let i = 0; i <= STATEMENT_ROWS_PER_QUERY; i++) {
    const res = await ctx.call(
      'POST',
      '/api/v1/agents/charges',
      { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `st-${user.id}-${i}` },
      '{"amount":0.01,"currency":"USD","description":"bench"}',
    );
    if (res.status !== 201) throw new Error(`statement history charge failed: ${res.status} ${res.body}`);
  }
  const page = (query: Record<string, string>): Invocation => ({
    route: 'user-statement',
    event: apiEvent('GET', '/api/v1/users/me/statement', '/api/v1/users/me/statement', { headers: { 'x-user-key': user.key }, query }),
  });
  const rows: RequestCount[] = [];
  for (const state of ['cold', 'warm'] as const)
    rows.push(await measure(STATEMENT_ENDPOINT, 'page 1, limit 20', state, page({ limit: '20' }), 200));
  rows.push(await measure(STATEMENT_ENDPOINT, 'filtered, no row matches', 'warm', page({ type: 'reversal' }), 200));
  const first = await ctx.call('GET', '/api/v1/users/me/statement?limit=20', { 'x-user-key': user.key });
  const { nextCursor } = JSON.parse(first.body) as { nextCursor: string };
  rows.push(await measure(STATEMENT_ENDPOINT, 'page 2 (cursor)', 'warm', page({ cursor: nextCursor }), 200));
  return rows;
}

/** Measures every endpoint, cold then warm. */
export async function requestsPerOperation(ctx: BenchContext): Promise<RequestCount[]> {
  const out: RequestCount[] = [];
  const agent = await enabledAgent(ctx);
  const user = await fundedUser(ctx, { USD: '1000', USDC: '1000' });
  const poor = await fundedUser(ctx, { USD: '0.01' });
  const ah = (a: Party) => ({ 'x-agent-key': a.key });
  const charge = (key: string, u: Party = user, amount = '1.25'): Invocation => ({
    route: 'create-charge',
    event: apiEvent('POST', '/api/v1/agents/charges', '/api/v1/agents/charges', {
      headers: { ...ah(agent), 'x-user-key': u.key, 'idempotency-key': key },
      body: `{"amount":${amount},"currency":"USD","description":"bench"}`,
    }),
  });
  const add = async (
    endpoint: string,
    label: string,
    states: ('cold' | 'warm')[],
    make: () => Invocation | Promise<Invocation>,
    expect: number,
  ) => {
    for (const state of states) out.push(await measure(endpoint, label, state, await make(), expect));
  };
  let n = 0;
  const key = () => `rq-${Date.now()}-${++n}`;

  await add('POST /api/v1/agents/charges', 'created (201)', ['cold', 'warm'], () => charge(key()), 201);
  out.push((await warmChargePair(ctx)).policy);
  out.push(await warmGrantCharge(ctx));
  out.push(await warmX402Settle(ctx));
  out.push(await warmX402Purchase(ctx));
  const replayKey = key();
  await measure('POST /api/v1/agents/charges', 'seed', 'warm', charge(replayKey), 201);
  await add('POST /api/v1/agents/charges', 'replay (same key, same body)', ['warm'], () => charge(replayKey), 201);
  await add('POST /api/v1/agents/charges', 'key reused, other body (422)', ['warm'], () => charge(replayKey, user, '2'), 422);
  // Warm: this container has already seen the poor user's key (a charge that takes their last cent).
  await measure('POST /api/v1/agents/charges', 'seed', 'warm', charge(key(), poor, '0.01'), 201);
  await add('POST /api/v1/agents/charges', 'insufficient balance (402)', ['warm'], () => charge(key(), poor, '5'), 402);

  const listed: Invocation = {
    route: 'list-charges',
    event: apiEvent('GET', '/api/v1/agents/charges', '/api/v1/agents/charges', { headers: ah(agent), query: { page: '1', limit: '20' } }),
  };
  await add('GET /api/v1/agents/charges', 'page 1, limit 20', ['cold', 'warm'], () => listed, 200);
  out.push(...(await consoleOverviewCost(user)));
  out.push(...(await statementPageCost(ctx)));
  const made = await ctx.call(
    'POST',
    '/api/v1/agents/charges',
    { ...ah(agent), 'x-user-key': user.key, 'idempotency-key': key() },
    '{"amount":1,"currency":"USD","description":"x"}',
  );
  const chargeId = (JSON.parse(made.body) as { id: string }).id;
  await add(
    'GET /api/v1/agents/charge/{id}',
    'own charge',
    ['cold', 'warm'],
    () => ({
      route: 'get-charge',
      event: apiEvent('GET', '/api/v1/agents/charge/{id}', `/api/v1/agents/charge/${chargeId}`, {
        headers: ah(agent),
        params: { id: chargeId },
      }),
    }),
    200,
  );
  await add(
    'GET /api/v1/agents/balance',
    'balances',
    ['cold', 'warm'],
    () => ({ route: 'get-balance', event: apiEvent('GET', '/api/v1/agents/balance', '/api/v1/agents/balance', { headers: ah(agent) }) }),
    200,
  );

  if (ROUTES.some((r) => r.name === 'withdraw')) {
    // A withdrawal locks the agent until its payout finishes: each measured one has its own agent.
    const withdrawer = async (): Promise<Party> => {
      const a = await enabledAgent(ctx);
      const res = await ctx.call(
        'POST',
        '/api/v1/agents/charges',
        { 'x-agent-key': a.key, 'x-user-key': user.key, 'idempotency-key': key() },
        '{"amount":20,"currency":"USD","description":"earn"}',
      );
      if (res.status !== 201) throw new Error(`funding charge failed: ${res.status}`);
      return a;
    };
    let lastPayout = { agent, payoutId: '' };
    for (const state of ['cold', 'warm'] as const) {
      const a = await withdrawer();
      // Warm: this container has already seen the agent's key.
      if (state === 'warm') await ctx.call('GET', '/api/v1/agents/balance', ah(a));
      const inv: Invocation = {
        route: 'withdraw',
        event: apiEvent('POST', '/api/v1/agents/withdraw', '/api/v1/agents/withdraw', {
          headers: { ...ah(a), 'idempotency-key': key() },
          body: json({ amount: 10, currency: 'USD', walletAddress: 'bench-payee@example.com' }),
        }),
      };
      const counted = await measure('POST /api/v1/agents/withdraw', 'accepted (200)', state, inv, 200);
      out.push(counted);
      lastPayout = { agent: a, payoutId: '' };
      const listedPayouts = await ctx.call('GET', '/api/v1/agents/withdraw', ah(a));
      lastPayout.payoutId = (JSON.parse(listedPayouts.body) as { payouts: { id: string }[] }).payouts[0]?.id ?? '';
    }
    const la = lastPayout.agent;
    await add(
      'GET /api/v1/agents/withdraw',
      'list',
      ['cold', 'warm'],
      () => ({
        route: 'list-withdrawals',
        event: apiEvent('GET', '/api/v1/agents/withdraw', '/api/v1/agents/withdraw', { headers: ah(la) }),
      }),
      200,
    );
    await add(
      'GET /api/v1/agents/withdraw?payoutId=',
      'one payout',
      ['cold', 'warm'],
      () => ({
        route: 'list-withdrawals',
        event: apiEvent('GET', '/api/v1/agents/withdraw', '/api/v1/agents/withdraw', {
          headers: ah(la),
          query: { payoutId: lastPayout.payoutId },
        }),
      }),
      200,
    );
  }

  const register = (): Invocation => ({
    route: 'register-agent',
    event: apiEvent('POST', '/api/v1/agents/register', '/api/v1/agents/register', {
      body: json({ name: `bench-reg-${randomUUID()}`, email: 'b@example.com', website: 'https://example.com' }),
    }),
  });
  await add('POST /api/v1/agents/register', 'registered (201)', ['cold', 'warm'], register, 201);

  const admin = ctx.admin;
  await add(
    'POST /api/v1/admin/users',
    'created (201)',
    ['cold', 'warm'],
    () => ({ route: 'admin-create-user', event: apiEvent('POST', '/api/v1/admin/users', '/api/v1/admin/users', { headers: admin }) }),
    201,
  );
  await add(
    'POST /api/v1/admin/users/{id}/credits',
    'credited (200)',
    ['cold', 'warm'],
    () => ({
      route: 'admin-credit-user',
      event: apiEvent('POST', '/api/v1/admin/users/{id}/credits', `/api/v1/admin/users/${user.id}/credits`, {
        headers: { ...admin, 'idempotency-key': key() },
        body: '{"amount":1,"currency":"USD"}',
        params: { id: user.id },
      }),
    }),
    200,
  );
  await add(
    'GET /api/v1/admin/users/{id}',
    'balances',
    ['cold', 'warm'],
    () => ({
      route: 'admin-get-user',
      event: apiEvent('GET', '/api/v1/admin/users/{id}', `/api/v1/admin/users/${user.id}`, { headers: admin, params: { id: user.id } }),
    }),
    200,
  );
  await add(
    'PATCH /api/v1/admin/agents/{id}',
    'enable',
    ['cold', 'warm'],
    () => ({
      route: 'admin-update-agent',
      event: apiEvent('PATCH', '/api/v1/admin/agents/{id}', `/api/v1/admin/agents/${agent.id}`, {
        headers: admin,
        body: '{"enabled":true}',
        params: { id: agent.id },
      }),
    }),
    200,
  );
  await add('GET /health', 'ok', ['cold', 'warm'], () => ({ route: 'health', event: apiEvent('GET', '/health', '/health') }), 200);
  await add(
    'POST /api/v1/agents/webhooks',
    'registered (201)',
    ['cold', 'warm'],
    () => ({
      route: 'agent-webhooks-create',
      event: apiEvent('POST', '/api/v1/agents/webhooks', '/api/v1/agents/webhooks', {
        headers: ah(agent),
        body: json({ url: 'http://127.0.0.1:9/bench-hook', events: ['charge.succeeded'] }),
      }),
    }),
    201,
  );
  out.push(await sweeperCost(ctx));
  out.push(...(await lifecycleCosts(ctx)));
  out.push(await topupCreditCost(ctx));
  out.push(await outboxCost(agent.id, user.id));
  return out;
}

/**
 * The charge lifecycle, warm (docs/lifecycle.md): a capture of part of a hold, a release, and a
 * partial refund, each by an agent whose key this container has already seen. Each is one
 * strongly consistent read of what it acts on (the charge; for a refund the charge and the
 * agent's shards in one BatchGetItem) and one TransactWriteItems.
 */
export async function lifecycleCosts(ctx: BenchContext): Promise<RequestCount[]> {
  const agent = await enabledAgent(ctx);
  const user = await fundedUser(ctx, { USD: '100' });
  const tag = `lc-${Date.now()}`;
  let n = 0;
  const create = async (body: string): Promise<string> => {
    const res = await ctx.call(
      'POST',
      '/api/v1/agents/charges',
      { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `${tag}-${++n}` },
      body,
    );
    if (res.status !== 201) throw new Error(`charge answered ${res.status}: ${res.body}`);
    return (JSON.parse(res.body) as { id: string }).id;
  };
  const holdBody = '{"amount":1,"currency":"USD","description":"metered","capture":false}';
  const act = (action: string, id: string, body?: string): Invocation => ({
    route: `${action}-charge`,
    event: apiEvent('POST', `/api/v1/agents/charge/{id}/${action}`, `/api/v1/agents/charge/${id}/${action}`, {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': `${tag}-${++n}` },
      ...(body !== undefined ? { body } : {}),
      params: { id },
    }),
  });
  const rows: RequestCount[] = [];
  // Warm each route's container for this agent's key first (an unmeasured call of the same route).
  for (const [action, label, body] of [
    ['capture', 'captured 0.37 of 1.00 (200)', '{"amount":0.37}'],
    ['release', 'released (200)', undefined],
  ] as const) {
    await measure(`POST /api/v1/agents/charge/{id}/${action}`, 'seed', 'warm', act(action, await create(holdBody), body), 200);
    rows.push(await measure(`POST /api/v1/agents/charge/{id}/${action}`, label, 'warm', act(action, await create(holdBody), body), 200));
  }
  const charged = await create('{"amount":5,"currency":"USD","description":"refundable"}');
  await measure('POST /api/v1/agents/charge/{id}/refund', 'seed', 'warm', act('refund', charged, '{"amount":1}'), 200);
  rows.push(
    await measure(
      'POST /api/v1/agents/charge/{id}/refund',
      'refunded 1.00 of 5.00 (200)',
      'warm',
      act('refund', charged, '{"amount":1}'),
      200,
    ),
  );
  return rows;
}
