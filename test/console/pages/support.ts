/**
 * For int tests of the console's pages: real payers (the operator's create-user use case) with a
 * signed-in session, the page routes called directly as the framework calls them (a session, and a
 * request already past CSRF and Origin), DynamoDB Local, and the PayPal imitation for USD top-ups.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import bs58 from 'bs58';
import { asFunction } from '../../../bin/local/function-scope';
import { type PaypalSandbox, startPaypalSandbox } from '../../../bin/local/paypal-sandbox';
import { resetForTests } from '../../../functions/config';
import type { ConsoleRequest, ConsoleResult, ConsoleSession } from '../../../functions/console/page';
import { PAGE_ROUTES } from '../../../functions/console/pages';
import { newAgentId } from '../../../functions/core/ids';
import { hashKey } from '../../../functions/core/keys';
import { parseAmount } from '../../../functions/core/money';
import { createAgent } from '../../../functions/store/identity/agent-registration.repository';
import { testKeyHash } from '../../support/agents';
import { createCharge, createUserWithKey, creditUserBalance } from '../../support/answers';
import { createTestTable } from '../../support/table';

export const BASE_URL = 'http://localhost:3000';

/** The environment the pages' use cases need; PayPal's imitation when `paypal` (USD top-ups). */
export function consolePagesEnv(opts: { paypal?: boolean } = {}): () => PaypalSandbox | undefined {
  let sandbox: PaypalSandbox | undefined;
  beforeAll(async () => {
    if (opts.paypal) sandbox = await startPaypalSandbox();
    Object.assign(process.env, {
      SOLANA_DEPOSIT_ADDRESS: bs58.encode(randomBytes(32)),
      USDC_MINT: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      WEBHOOK_LOCAL_SECRET_KEY: randomBytes(32).toString('base64'),
      WEBHOOK_ALLOW_LOOPBACK: '1',
      PUBLIC_BASE_URL: BASE_URL,
      ...(sandbox ? { PAYPAL_BASE_URL: sandbox.url, PAYPAL_CLIENT_ID: sandbox.clientId, PAYPAL_CLIENT_SECRET: sandbox.clientSecret } : {}),
    });
    resetForTests();
    await createTestTable();
  });
  afterAll(async () => {
    await sandbox?.stop();
  });
  return () => sandbox;
}

export interface Payer {
  userId: string;
  userKey: string;
  session: ConsoleSession;
}

/** A payer made by the operator's use case, signed in (a session as the framework hands it to pages). */
export async function newPayer(timeZone?: string): Promise<Payer> {
  const made = (await createUserWithKey()).body as { id: string; userKey: string };
  return {
    userId: made.id,
    userKey: made.userKey,
    session: { userId: made.id, csrfToken: `csrf-${randomUUID()}`, ...(timeZone ? { timeZone } : {}) },
  };
}

/** Credits the payer as the operator does. */
export async function credit(payer: Payer, amount: string, currency: 'USD' | 'USDC'): Promise<void> {
  await creditUserBalance({
    userId: payer.userId,
    amount: parseAmount(amount, currency, Number.MAX_SAFE_INTEGER),
    currency,
    idempotencyKey: randomUUID(),
  });
}

/** A registered, enabled agent named `name` (unique: a suffix of its id when the name is not given). */
export async function newAgent(given?: string) {
  const id = newAgentId();
  const name = given ?? `Agent ${id.slice(-8)}`;
  await createAgent({
    id,
    name,
    email: 'agent@example.com',
    website: 'https://example.com',
    enabled: true,
    createdAt: new Date().toISOString(),
    keyHash: testKeyHash(id),
  });
  return { id, keyHash: testKeyHash(id), name };
}

/** An account-key charge of `agent` to the payer (the agent's own use case, as POST /api/v1/agents/charges runs it). */
export async function charge(
  agent: { id: string; keyHash: string; name: string },
  payer: Payer,
  amount: string,
  currency: 'USD' | 'USDC',
  description: string,
  options: { capture?: boolean } = {},
) {
  return createCharge({
    ...options,
    agent,
    userId: payer.userId,
    userKeyHash: hashKey(payer.userKey),
    idempotencyKey: randomUUID(),
    amount: parseAmount(amount, currency, Number.MAX_SAFE_INTEGER),
    currency,
    description,
    baseUrl: BASE_URL,
  });
}

function route(method: 'GET' | 'POST', path: string): { page: (typeof PAGE_ROUTES)[number]['page']; params: Record<string, string> } {
  for (const r of PAGE_ROUTES) {
    if (r.method !== method) continue;
    const want = r.path.split('/');
    const got = path.split('/');
    if (want.length !== got.length) continue;
    const params: Record<string, string> = {};
    let matches = true;
    want.forEach((seg, i) => {
      if (seg.startsWith(':')) params[seg.slice(1)] = decodeURIComponent(got[i] ?? '');
      else if (seg !== got[i]) matches = false;
    });
    if (matches) return { page: r.page, params };
  }
  throw new Error(`no console page route ${method} ${path}`);
}

function request(
  method: 'GET' | 'POST',
  path: string,
  extra: Partial<ConsoleRequest> = {},
): ConsoleRequest & { page: ReturnType<typeof route>['page'] } {
  const [pathname = path, search = ''] = path.split('?');
  const { page, params } = route(method, pathname);
  return {
    page,
    method,
    path: pathname,
    params,
    query: Object.fromEntries(new URLSearchParams(search)),
    form: {},
    baseUrl: BASE_URL,
    now: new Date(),
    ...extra,
  };
}

/** GET a page as the framework would, for this payer, as the console's function (its deployed environment alone). */
export async function get(payer: Payer, path: string): Promise<ConsoleResult> {
  const { page, ...req } = request('GET', path);
  return asFunction('console-pages', () => page(payer.session, req));
}

/** POST a form (already past CSRF and Origin: the framework removes `csrf`), as the console's function. */
export async function post(payer: Payer, path: string, form: Record<string, string>): Promise<ConsoleResult> {
  const { page, ...req } = request('POST', path, { form });
  return asFunction('console-pages', () => page(payer.session, req));
}

/** The page's markup (fails the test for a redirect or a download). */
export function bodyOf(result: ConsoleResult): string {
  if (result.kind !== 'page') throw new Error(`expected a page, got ${result.kind}`);
  return result.body.text;
}

/** The status a page answer carries (200 unless it says otherwise). */
export const statusOf = (result: ConsoleResult) =>
  result.kind === 'page' ? (result.status ?? 200) : result.kind === 'redirect' ? 303 : 200;

/** The hidden one-time key of the form posting to `action` on a rendered page. */
export function onceKeyOf(markup: string, action: string): string {
  const form = markup.split('<form').find((f) => f.includes(`action="${action}"`));
  const key = form && /name="idempotencyKey" value="([^"]+)"/.exec(form)?.[1];
  if (!key) throw new Error(`no one-time key in the form to ${action}`);
  return key;
}

/** Every form renders the session's CSRF token. */
export function expectCsrfInEveryPostForm(markup: string, session: ConsoleSession): void {
  const forms = markup.split('<form').slice(1);
  for (const form of forms) {
    const head = form.slice(0, form.indexOf('>'));
    if (!/method="post"/.test(head)) continue;
    expect(form).toContain(`<input type="hidden" name="csrf" value="${session.csrfToken}">`);
  }
}
