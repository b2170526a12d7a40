/**
 * Attacks on the operations of issue 39 (DESIGN §25: every route one operation run by `execute`;
 * MCP tools running their route's operation in-process; console forms through `runFor`), against
 * DynamoDB Local:
 * - credentials: `anyAgentKey` (a disabled agent's key accepted by its form) is the key rotation's
 *   alone, though the registry comparison (test/operations) cannot tell it from `agent`; get-charge's
 *   x-admin-key path is closed under ADMIN_AUTH=iam; a Bearer header does not outrank x-agent-key;
 * - MCP: a tool's arguments cannot smuggle another agent's key, the operator's key or another
 *   path into the request the remote server builds, and a call never acts as another agent;
 * - the console's `runFor` with a passkey-opened session's empty key hash: no grant, webhook or
 *   rotation is made under "the empty key";
 * - idempotent replays: another agent's reuse of an Idempotency-Key never gets the first agent's
 *   stored answer, nor another payer's (a grant's creation, a console once-only form's key);
 * - a payer's decisions (release, approve, decline) through runFor never reach another payer's hold.
 */
import { randomBytes } from 'node:crypto';
import { resetForTests } from '../../functions/config';
import { type ApiRequest, type ApiResult, StoredReply } from '../../functions/contracts/api';
import { serialize } from '../../functions/contracts/json';
import { renderRefusal } from '../../functions/contracts/outcome';
import { newAgentId } from '../../functions/core/ids';
import { AGENT_KEY_PREFIX, generateKey, hashKey } from '../../functions/core/keys';
import { inProcess } from '../../functions/mcp/server';
import { TOOLS } from '../../functions/mcp/tools';
import { isRefusal } from '../../functions/messages/refusal';
import { rotateAgentKeyOperation } from '../../functions/operations/agents';
import { OPERATIONS } from '../../functions/operations/all';
import { createChargeOperation, getChargeOperation } from '../../functions/operations/charges';
import { execute, runFor } from '../../functions/operations/execute';
import { userCreateGrantOperation } from '../../functions/operations/grants';
import type { Credentials } from '../../functions/operations/operation';
import {
  userApproveChargeOperation,
  userDeclineChargeOperation,
  userReleaseChargeOperation,
  userRotateKeyJoining,
  userRotateKeyOperation,
} from '../../functions/operations/payers';
import { userWebhooksCreateOperation } from '../../functions/operations/webhooks';
import { x402PaymentsOperation } from '../../functions/operations/x402-payments';
import { createAgent } from '../../functions/store/identity/agent-registration.repository';
import { listOwnerWebhooks } from '../../functions/use-cases/events/webhooks';
import { onceOnly } from '../../functions/use-cases/identity/console-forms';
import { listMyGrants } from '../../functions/use-cases/identity/grants';
import { createUserWithKey } from '../../functions/use-cases/identity/users';
import { creditUserBalance } from '../support/answers';
import { createTestTable } from '../support/table';

beforeAll(async () => {
  Object.assign(process.env, { WEBHOOK_LOCAL_SECRET_KEY: randomBytes(32).toString('base64'), WEBHOOK_ALLOW_LOOPBACK: '1' });
  resetForTests();
  await createTestTable();
});

const request = (headers: Record<string, string>, parts: Partial<ApiRequest> = {}): ApiRequest => ({
  method: 'POST',
  path: '/test',
  headers,
  query: {},
  params: {},
  body: undefined,
  requestId: '',
  ...parts,
});

async function agentWithKey(enabled = true): Promise<{ id: string; key: string }> {
  const key = generateKey(AGENT_KEY_PREFIX);
  const id = newAgentId();
  await createAgent({
    id,
    name: `attack agent ${id}`,
    email: 'agent@example.com',
    website: 'https://example.com',
    enabled,
    createdAt: new Date().toISOString(),
    keyHash: hashKey(key),
  });
  return { id, key };
}

async function payer(usd = '10'): Promise<{ userId: string; userKey: string }> {
  const { userId, userKey } = await createUserWithKey();
  await creditUserBalance({ userId, amount: Number(usd) * 100, currency: 'USD', idempotencyKey: `credit-${userId}` });
  return { userId, userKey };
}

/** What the route answers: its result, or the refusal as the handler sends it. */
async function answer(result: Promise<ApiResult>): Promise<{ status: number; text: string }> {
  try {
    const done = await result;
    return { status: done.statusCode, text: done.rawBody ?? serialize(done.body ?? {}) };
  } catch (error) {
    if (!isRefusal(error)) throw error;
    const { status, text } = renderRefusal(error);
    return { status, text };
  }
}

const idOf = (answered: { text: string }) => (JSON.parse(answered.text) as { id: string }).id;

const readCharge = (agentKey: string, id: string) =>
  answer(execute(getChargeOperation, request({ 'x-agent-key': agentKey }, { method: 'GET', params: { id } })));

const charge = (agentKey: string, userKey: string, idempotencyKey: string, amount = '1.00') =>
  answer(
    execute(
      createChargeOperation,
      request(
        { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': idempotencyKey },
        { body: `{"amount":${amount},"currency":"USD"}` },
      ),
    ),
  );

const toolNamed = (name: string) => {
  const tool = TOOLS.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
};

describe('credentials the registry comparison cannot tell apart', () => {
  it('anyAgentKey (a disabled agent’s key by its form) is the key rotation’s, and the x402 refunds’ (DESIGN §28: a disabled agent may still give money back; their use case resolves the key to an agent, 401 otherwise: test/security/x402-refund-attacks.e2e)', () => {
    const loose = [...OPERATIONS.values()].filter((op) => (op.credentials as Credentials).kind === 'anyAgentKey').map((op) => op.route);
    expect(loose.sort()).toEqual(['agent-x402-refund-create', 'agent-x402-refund-get', 'rotate-agent-key']);
  });

  it('anyAgentKey takes a key by its form, but rotates only a key that is an agent’s now', async () => {
    const rotate = (key: string) => answer(execute(rotateAgentKeyOperation, request({ 'x-agent-key': key })));
    // A well-formed key of no agent, and a key already rotated away: refused, nothing made.
    expect((await rotate(generateKey(AGENT_KEY_PREFIX))).status).toBe(401);
    const disabled = await agentWithKey(false);
    const rotated = await rotate(disabled.key);
    expect(rotated.status).toBe(200);
    expect((await rotate(disabled.key)).status).toBe(401);
    // The disabled agent stays disabled under its new key: it reads no charge with it.
    const { apiKey } = JSON.parse(rotated.text) as { apiKey: string };
    expect(apiKey).toMatch(/^ag_live_/);
    expect((await readCharge(apiKey, 'c_x')).status).toBe(401);
  });

  it('a disabled agent’s key reads no charge and makes none (only the rotation takes it)', async () => {
    const disabled = await agentWithKey(false);
    const { userKey } = await payer();
    expect((await readCharge(disabled.key, 'c_x')).status).toBe(401);
    expect((await charge(disabled.key, userKey, 'k-disabled')).status).toBe(401);
  });
});

describe('get-charge’s operator path under ADMIN_AUTH=iam', () => {
  const before = process.env.ADMIN_AUTH;
  afterEach(() => {
    if (before === undefined) delete process.env.ADMIN_AUTH;
    else process.env.ADMIN_AUTH = before;
    resetForTests();
  });

  it('x-admin-key is not a credential there: the agent key is asked for', async () => {
    const agent = await agentWithKey();
    const { userKey } = await payer();
    const id = idOf(await charge(agent.key, userKey, 'k-iam'));
    const adminKey = process.env.ADMIN_KEY ?? 'any-admin-key';
    const asOperator = () => answer(execute(getChargeOperation, request({ 'x-admin-key': adminKey }, { method: 'GET', params: { id } })));
    // Under ADMIN_AUTH=key the operator's key reads any agent's charge (the documented path)...
    expect((await asOperator()).status).toBe(200);
    // ...under iam it is no credential: the agent's key is asked for, nothing of the charge shown.
    process.env.ADMIN_AUTH = 'iam';
    resetForTests();
    const read = await asOperator();
    expect(read).toEqual({ status: 401, text: 'missing x-agent-key header' });
  });
});

describe('MCP tool arguments', () => {
  it('never carry another agent’s key, the operator’s key or another path', async () => {
    const a = await agentWithKey();
    const b = await agentWithKey();
    const { userKey } = await payer();
    const bCharge = { id: idOf(await charge(b.key, userKey, 'k-b')) };
    const executor = inProcess(a.key, 'http://localhost');
    const asA = (tool: ReturnType<typeof toolNamed>, args: Record<string, unknown>) =>
      answer(executor(tool, args).then((done) => ({ statusCode: done.status, body: undefined, rawBody: done.text })));

    // B's charge, by id and by path tricks, through A's MCP session: never found.
    for (const charge_id of [bCharge.id, `../${bCharge.id}`, `${bCharge.id}/../${bCharge.id}`, `${bCharge.id}\r\nx-agent-key: ${b.key}`]) {
      const answer = await asA(toolNamed('get_charge'), { charge_id });
      expect([charge_id, answer.status]).toEqual([charge_id, 404]);
      expect(answer.text).not.toContain(bCharge.id);
    }

    // A header smuggled in user_key is just a (wrong) user key: refused, nothing charged to anyone.
    for (const user_key of [`${userKey}\r\nx-agent-key: ${b.key}`, `${userKey}\nx-admin-key: x`]) {
      const answer = await asA(toolNamed('create_charge'), {
        amount: 1,
        currency: 'USD',
        user_key,
        idempotency_key: `smuggle-${user_key.length}`,
      });
      expect(answer.status).toBe(401);
    }

    // A's own charge through MCP is A's, whatever the arguments name.
    const mine = await asA(toolNamed('create_charge'), { amount: 1, currency: 'USD', user_key: userKey, idempotency_key: 'k-b' });
    expect(mine.status).toBe(201);
    const mineId = idOf(mine);
    expect(mineId).not.toBe(bCharge.id);
    expect((await readCharge(a.key, mineId)).status).toBe(200);
    expect((await readCharge(b.key, mineId)).status).toBe(404);
  });

  it('charge with another agent’s grant key: refused, the payer’s balance untouched', async () => {
    const a = await agentWithKey();
    const b = await agentWithKey();
    const p = await payer();
    const made = await runFor(
      userCreateGrantOperation,
      { userId: p.userId, userKeyHash: hashKey(p.userKey) },
      { body: { agentId: b.id, currency: 'USD' } },
    );
    if (made instanceof StoredReply) throw new Error('no grant made');
    const executor = inProcess(a.key, 'http://localhost');
    const tried = await answer(
      executor(toolNamed('create_charge'), { amount: 1, currency: 'USD', user_key: made.key, idempotency_key: 'stolen-grant' }).then(
        (done) => ({
          statusCode: done.status,
          body: undefined,
          rawBody: done.text,
        }),
      ),
    );
    expect(tried).toEqual({ status: 403, text: 'grant is for another agent' });
    // B itself may charge with it (the refusal was A's).
    expect((await charge(b.key, made.key, 'own-grant')).status).toBe(201);
  });

  it('a tool’s request names no header but the user key and the Idempotency-Key', () => {
    const args: Record<string, Record<string, unknown>> = {
      create_charge: { amount: 1, currency: 'USD', user_key: 'u', idempotency_key: 'k' },
      capture_charge: { charge_id: 'c', idempotency_key: 'k' },
      release_charge: { charge_id: 'c', idempotency_key: 'k' },
      refund_charge: { charge_id: 'c', idempotency_key: 'k' },
      withdraw: { amount: 1, currency: 'USD', walletAddress: 'w', idempotency_key: 'k' },
      request_grant: { currency: 'USD', idempotency_key: 'k' },
      tab_open: { currency: 'USD', limit: 1, user_key: 'u', idempotency_key: 'k' },
      tab_use: { tab_id: 't', amount: 1, idempotency_key: 'k' },
      x402_refund: { payment_id: 'x', idempotency_key: 'k' },
    };
    for (const tool of TOOLS) {
      const call = tool.http((args[tool.name] ?? {}) as never);
      for (const name of Object.keys(call.headers ?? {}))
        expect([tool.name, ['x-user-key', 'idempotency-key'].includes(name)]).toEqual([tool.name, true]);
    }
  });
});

describe('the Bearer header (x402’s other way of sending the agent key)', () => {
  it('is a credential on the x402 routes only, for an enabled agent only, and never outranks x-agent-key', async () => {
    const a = await agentWithKey();
    const b = await agentWithKey();
    const disabled = await agentWithKey(false);
    const { userKey } = await payer();
    const payments = (headers: Record<string, string>) => answer(execute(x402PaymentsOperation, request(headers, { method: 'GET' })));
    expect((await payments({ authorization: `Bearer ${a.key}` })).status).toBe(200);
    expect((await payments({ authorization: `Bearer ${disabled.key}` })).status).toBe(401);
    // x-agent-key is read first: a Bearer of another agent beside a wrong x-agent-key is not tried.
    expect((await payments({ 'x-agent-key': 'ag_live_wrong', authorization: `Bearer ${b.key}` })).status).toBe(401);
    // On a route that is not x402's, Bearer alone is no credential.
    const bearerCharge = await answer(
      execute(
        createChargeOperation,
        request(
          { authorization: `Bearer ${a.key}`, 'x-user-key': userKey, 'idempotency-key': 'bearer' },
          { body: '{"amount":1.00,"currency":"USD"}' },
        ),
      ),
    );
    expect(bearerCharge).toEqual({ status: 401, text: 'missing x-agent-key header' });
  });
});

describe('a grant request through MCP', () => {
  it('is polled by its own agent only: another agent’s poll finds nothing and claims no key', async () => {
    const a = await agentWithKey();
    const b = await agentWithKey();
    const viaMcp = (key: string) => {
      const executor = inProcess(key, 'http://localhost');
      return (name: string, args: Record<string, unknown>) =>
        answer(executor(toolNamed(name), args).then((done) => ({ statusCode: done.status, body: undefined, rawBody: done.text })));
    };
    const asked = await viaMcp(a.key)('request_grant', { currency: 'USD', idempotency_key: 'ask' });
    expect(asked.status).toBe(201);
    const requestId = idOf(asked);
    expect(await viaMcp(b.key)('get_grant_request', { request_id: requestId })).toEqual({ status: 404, text: 'grant request not found' });
    // B reusing A's Idempotency-Key asks its own request, never answered A's.
    const bAsked = await viaMcp(b.key)('request_grant', { currency: 'USD', idempotency_key: 'ask' });
    expect(idOf(bAsked)).not.toBe(requestId);
    expect((await viaMcp(a.key)('get_grant_request', { request_id: requestId })).status).toBe(200);
  });
});

describe('a passkey-opened console session (empty key hash) through runFor', () => {
  it('makes no grant, no webhook endpoint and no rotation under the empty key', async () => {
    const agent = await agentWithKey();
    const { userId, userKey } = await payer();
    const caller = { userId, userKeyHash: '' };
    const refused = (run: Promise<unknown>) =>
      run.then(
        () => 'done',
        (error: Error) => error.message,
      );
    const tried = [
      await refused(runFor(userCreateGrantOperation, caller, { body: { agentId: agent.id, currency: 'USD' } })),
      await refused(runFor(userWebhooksCreateOperation, caller, { body: { url: 'http://127.0.0.1:9/hook' } })),
      await refused(runFor(userRotateKeyOperation, caller, {})),
    ];
    // Each refused by the account key's own condition (the rotation's, read as a race lost).
    expect(tried).toEqual(['invalid user key', 'invalid user key', 'user key was rotated concurrently, retry with the new key']);
    expect((await listMyGrants(userId, { limit: 10 })).grants).toEqual([]);
    expect(await listOwnerWebhooks({ kind: 'user', id: userId })).toEqual([]);
    // The same forms with the key that stands behind the session do act (the refusals were the key's).
    const keyed = { userId, userKeyHash: hashKey(userKey) };
    await runFor(userCreateGrantOperation, keyed, { body: { agentId: agent.id, currency: 'USD' } });
    await runFor(userWebhooksCreateOperation, keyed, { body: { url: 'http://127.0.0.1:9/hook' } });
    expect((await listMyGrants(userId, { limit: 10 })).grants).toHaveLength(1);
    expect(await listOwnerWebhooks({ kind: 'user', id: userId })).toHaveLength(1);
  });
});

describe('idempotent replays across agents', () => {
  it('another agent reusing an Idempotency-Key gets its own charge, never the first agent’s stored answer', async () => {
    const a = await agentWithKey();
    const b = await agentWithKey();
    const { userKey } = await payer();
    const first = await charge(a.key, userKey, 'shared-key');
    const second = await charge(b.key, userKey, 'shared-key');
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(idOf(second)).not.toBe(idOf(first));
    expect((await readCharge(b.key, idOf(second))).status).toBe(200);
    expect((await readCharge(b.key, idOf(first))).status).toBe(404);
    // A's replay is A's own first answer, B's is B's.
    expect(await charge(a.key, userKey, 'shared-key')).toEqual(first);
    expect(await charge(b.key, userKey, 'shared-key')).toEqual(second);
  });

  it('a stored reply never answers runFor for another payer', async () => {
    const agent = await agentWithKey();
    const p1 = await payer();
    const p2 = await payer();
    const body = { agentId: agent.id, currency: 'USD' };
    const k1 = hashKey(p1.userKey);
    const k2 = hashKey(p2.userKey);
    const one = await runFor(userCreateGrantOperation, { userId: p1.userId, userKeyHash: k1 }, { idempotencyKey: 'same', body });
    const two = await runFor(userCreateGrantOperation, { userId: p2.userId, userKeyHash: k2 }, { idempotencyKey: 'same', body });
    expect(one).not.toBeInstanceOf(StoredReply);
    expect(two).not.toBeInstanceOf(StoredReply);
    expect((await listMyGrants(p2.userId, { limit: 10 })).grants).toHaveLength(1);
  });
});

describe('the console’s once-only forms', () => {
  it('answer a form key only to the payer who used it: another payer’s submit with the same key acts for them', async () => {
    const p1 = await payer();
    const p2 = await payer();
    const rotate = (p: { userId: string; userKey: string }) =>
      onceOnly<unknown, { rotated: true }>(p.userId, 'rotate-key', 'same-form-key', {}, (record) =>
        runFor(userRotateKeyJoining([record({ rotated: true })]), { userId: p.userId, userKeyHash: hashKey(p.userKey) }, {}),
      );
    expect((await rotate(p1)).replayed).toBe(false);
    expect((await rotate(p2)).replayed).toBe(false);
    // p1's own second submit is the replay.
    expect((await rotate(p1)).replayed).toBe(true);
  });
});

describe('a payer’s decisions through runFor', () => {
  it('never reach another payer’s hold', async () => {
    const agent = await agentWithKey();
    const owner = await payer();
    const intruder = await payer();
    const hold = await answer(
      execute(
        createChargeOperation,
        request(
          { 'x-agent-key': agent.key, 'x-user-key': owner.userKey, 'idempotency-key': 'hold' },
          { body: '{"amount":1.00,"currency":"USD","capture":false}' },
        ),
      ),
    );
    const id = idOf(hold);
    const asIntruder = { userId: intruder.userId, userKeyHash: '' };
    for (const op of [userReleaseChargeOperation, userApproveChargeOperation, userDeclineChargeOperation]) {
      const tried = await runFor(op, asIntruder, { params: { id } }).then(
        () => 'done',
        (error: Error) => error.message,
      );
      expect([op.route, tried]).toEqual([op.route, 'charge not found']);
    }
    expect(JSON.parse((await readCharge(agent.key, id)).text)).toMatchObject({ status: 'PENDING' });
  });
});

describe('a sealed creation’s replay under an empty key hash', () => {
  it('is refused as a bad key: the grant key and the webhook secret are not handed out again', async () => {
    const agent = await agentWithKey();
    const { userId, userKey } = await payer();
    const keyed = { userId, userKeyHash: hashKey(userKey) };
    const passkey = { userId, userKeyHash: '' };
    const grant = { agentId: agent.id, currency: 'USD' };
    const hook = { url: 'http://127.0.0.1:9/sealed' };
    const outcome = (run: Promise<unknown>) =>
      run.then(
        (done) => (done instanceof StoredReply ? 'replayed' : 'made'),
        (error: Error) => error.message,
      );
    expect(await outcome(runFor(userCreateGrantOperation, keyed, { idempotencyKey: 'g', body: grant }))).toBe('made');
    expect(await outcome(runFor(userWebhooksCreateOperation, keyed, { idempotencyKey: 'w', body: hook }))).toBe('made');
    expect(await outcome(runFor(userCreateGrantOperation, passkey, { idempotencyKey: 'g', body: grant }))).toBe('invalid user key');
    expect(await outcome(runFor(userWebhooksCreateOperation, passkey, { idempotencyKey: 'w', body: hook }))).toBe('invalid user key');
    // The key's own replay still works (the refusals were the empty hash's).
    expect(await outcome(runFor(userCreateGrantOperation, keyed, { idempotencyKey: 'g', body: grant }))).toBe('replayed');
  });
});
