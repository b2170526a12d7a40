/**
 * Grants (DESIGN §16, docs/grants.md): the payer issues, lists, reads and revokes scoped grant
 * keys with the account key; a grant key opens no /users/me route; at most 100 active grants,
 * exactly, under concurrent creates.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack({ AUTH_CACHE_TTL_MS: '0' });
auditAfterAll();

type Grant = {
  id: string;
  agent: { id: string; name: string };
  currency: string;
  limits: Record<string, number>;
  approvalAbove?: number;
  description: string;
  expiresAt: string | null;
  status: string;
  spent: number;
  createdAt: string;
  revokedAt: string | null;
  key?: string;
  error?: string;
};
type Page = { data: Grant[]; nextCursor: string | null; error?: string };

const as = (key: string) => ({ 'x-user-key': key });
const create = (userKey: string, body: Record<string, unknown>) =>
  t.call<Grant>('POST', '/api/v1/users/me/grants', { headers: as(userKey), body });
const list = (userKey: string, query = '') => t.call<Page>('GET', `/api/v1/users/me/grants${query}`, { headers: as(userKey) });
const get = (userKey: string, id: string) => t.call<Grant>('GET', `/api/v1/users/me/grants/${id}`, { headers: as(userKey) });
const revoke = (userKey: string, id: string) => t.call<Grant>('DELETE', `/api/v1/users/me/grants/${id}`, { headers: as(userKey) });

describe('grants', () => {
  it('issues a grant: the Grant with its key, shown once; reads never show the key', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser();
    const before = Date.now();
    const res = await create(user.key, {
      agentId: agent.id,
      currency: 'USD',
      limits: { perCharge: 5, total: 20 },
      approvalAbove: 2,
      ttlSeconds: 86400,
      description: 'weather lookups',
    });
    expect(res.status).toBe(201);
    const { key, ...grant } = res.body;
    expect(key).toMatch(/^ug_live_[1-9A-HJ-NP-Za-km-z]{40,}$/);
    expect(grant).toEqual({
      id: expect.stringMatching(/^g01[0-9a-z]{24}$/),
      agent: { id: agent.id, name: expect.any(String) },
      currency: 'USD',
      limits: { perCharge: 5, total: 20 },
      approvalAbove: 2,
      description: 'weather lookups',
      expiresAt: expect.any(String),
      status: 'active',
      spent: 0,
      createdAt: expect.any(String),
      revokedAt: null,
    });
    expect(Date.parse(grant.expiresAt as string) - before).toBeGreaterThanOrEqual(86_400_000 - 1000);
    expect(res.text).toContain('"perCharge":5,"total":20');

    const read = await get(user.key, grant.id);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(grant);
    expect(read.text).not.toContain('ug_live_');
    // Without ttlSeconds it lasts until revoked; no limits is no limits.
    const open = await create(user.key, { agentId: agent.id, currency: 'USDC' });
    expect(open.status).toBe(201);
    expect(open.body).toMatchObject({ currency: 'USDC', limits: {}, expiresAt: null, description: '', status: 'active' });
    expect(open.body.approvalAbove).toBeUndefined();
  });

  it('refuses bad requests with 400 naming the field, and an unknown agent', async () => {
    const user = await t.fundedUser();
    const agent = await t.enabledAgent();
    const cases: [Record<string, unknown>, string][] = [
      [{ agentId: 'a01jhx3k6v1f8q2n7c9m4p5r6s7', currency: 'USD' }, 'agentId: agent not found'],
      [{ agentId: 'nope', currency: 'USD' }, 'agentId must be an agent id'],
      [{ agentId: agent.id, currency: 'EUR' }, 'currency must be one of USD, USDC'],
      [{ agentId: agent.id, currency: 'USD', ttlSeconds: 59 }, 'ttlSeconds must be at least 60'],
      [{ agentId: agent.id, currency: 'USD', ttlSeconds: 31536001 }, 'ttlSeconds must be at most 31536000'],
      [{ agentId: agent.id, currency: 'USD', limits: { total: 1.001 } }, 'limits.total has more than 2 decimal places for USD'],
      [{ agentId: agent.id, currency: 'USD', limits: { weekly: 1 } }, 'unknown field: limits.weekly'],
      [{ agentId: agent.id, currency: 'USD', approvalAbove: -1 }, 'approvalAbove must be greater than 0'],
    ];
    for (const [body, error] of cases) {
      const res = await create(user.key, body);
      expect({ body, status: res.status, error: res.body.error }).toEqual({ body, status: 400, error });
    }
    expect((await list(user.key)).body.data).toEqual([]);
  });

  it('lists newest first with a cursor and a status filter; 404 for an unknown grant or another payer’s', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(user.key, { agentId: agent.id, currency: 'USD', description: `g${i}` })).body.id);
    const first = await list(user.key, '?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.data.map((g) => g.id)).toEqual([ids[4], ids[3]]);
    const second = await list(user.key, `?cursor=${first.body.nextCursor}`);
    expect(second.body.data.map((g) => g.id)).toEqual([ids[2], ids[1]]);
    const third = await list(user.key, `?cursor=${second.body.nextCursor}`);
    expect(third.body).toEqual({ data: [expect.objectContaining({ id: ids[0] })], nextCursor: null });
    expect((await list(user.key, '?cursor=garbage')).body).toEqual({ error: 'cursor is invalid' });
    expect((await list(user.key, '?status=gone')).status).toBe(400);

    expect((await revoke(user.key, ids[1] as string)).status).toBe(200);
    expect((await list(user.key, '?status=revoked')).body.data.map((g) => g.id)).toEqual([ids[1]]);
    expect((await list(user.key, '?status=active')).body.data.map((g) => g.id)).toEqual([ids[4], ids[3], ids[2], ids[0]]);
    expect((await list(user.key, '?status=expired')).body.data).toEqual([]);

    const other = await t.fundedUser();
    for (const [key, id] of [
      [other.key, ids[0]],
      [user.key, 'g01jhx3k6v1f8q2n7c9m4p5r6s7'],
      [user.key, 'nope'],
    ] as const) {
      for (const res of [await get(key, id as string), await revoke(key, id as string)]) {
        expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { error: 'grant not found' } });
      }
    }
    expect((await get(user.key, ids[0] as string)).body.status).toBe('active');
  });

  it('revokes: 200 revoked, and again the same 200', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser();
    const { id } = (await create(user.key, { agentId: agent.id, currency: 'USD', limits: { daily: 3 } })).body;
    const first = await revoke(user.key, id);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id, status: 'revoked', revokedAt: expect.any(String), limits: { daily: 3 } });
    const again = await revoke(user.key, id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await get(user.key, id)).body).toEqual(first.body);
  });

  it('shows a grant past expiresAt as expired', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser();
    const { id } = (await create(user.key, { agentId: agent.id, currency: 'USD', ttlSeconds: 60 })).body;
    await expire(user.id, id);
    expect((await get(user.key, id)).body.status).toBe('expired');
    expect((await list(user.key, '?status=expired')).body.data.map((g) => g.id)).toEqual([id]);
  });

  it('takes no grant key on any /users/me route: 401 invalid user key', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser();
    const { key, id } = (await create(user.key, { agentId: agent.id, currency: 'USD' })).body;
    const routes: [string, string, unknown?][] = [
      ['GET', '/api/v1/users/me'],
      ['GET', '/api/v1/users/me/charges'],
      ['GET', '/api/v1/users/me/policy'],
      ['PUT', '/api/v1/users/me/policy', {}],
      ['POST', '/api/v1/users/me/keys/rotate'],
      ['GET', '/api/v1/users/me/grants'],
      ['POST', '/api/v1/users/me/grants', { agentId: agent.id, currency: 'USD' }],
      ['GET', `/api/v1/users/me/grants/${id}`],
      ['DELETE', `/api/v1/users/me/grants/${id}`],
      ['GET', '/api/v1/users/me/webhooks'],
      ['GET', '/api/v1/users/me/topups'],
    ];
    for (const [method, path, body] of routes) {
      const res = await t.call(method, path, { headers: as(key as string), ...(body ? { body } : {}) });
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 401, body: { error: 'invalid user key' } });
    }
    expect((await get(user.key, id)).body.status).toBe('active');
  });

  it('keeps at most 100 active grants under concurrent creates; revoked and expired ones stop counting', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser();
    const replies = await Promise.all(Array.from({ length: 110 }, () => create(user.key, { agentId: agent.id, currency: 'USD' })));
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(100);
    expect(statuses.filter((s) => s === 409)).toHaveLength(10);
    expect(replies.find((r) => r.status === 409)?.body).toEqual({ error: 'grant limit reached: at most 100 active grants' });

    const made = replies.filter((r) => r.status === 201).map((r) => r.body.id);
    // A revoked grant frees its place, once (revoking it again frees nothing).
    await revoke(user.key, made[0] as string);
    await revoke(user.key, made[0] as string);
    expect((await create(user.key, { agentId: agent.id, currency: 'USD' })).status).toBe(201);
    expect((await create(user.key, { agentId: agent.id, currency: 'USD' })).status).toBe(409);
    // So does an expired one: reclaimed when a create finds the limit reached.
    await expire(user.id, made[1] as string);
    await expire(user.id, made[2] as string);
    const racing = await Promise.all(Array.from({ length: 5 }, () => create(user.key, { agentId: agent.id, currency: 'USD' })));
    expect(racing.map((r) => r.status).sort()).toEqual([201, 201, 409, 409, 409]);
    // An expired grant revoked after it was reclaimed frees nothing more.
    await revoke(user.key, made[1] as string);
    expect((await create(user.key, { agentId: agent.id, currency: 'USD' })).status).toBe(409);
    let active = 0;
    let cursor: string | null = null;
    do {
      const page: Page = (await list(user.key, `?status=active&limit=100${cursor ? `&cursor=${cursor}` : ''}`)).body;
      active += page.data.length;
      cursor = page.nextCursor;
    } while (cursor);
    expect(active).toBe(100);
  }, 120_000);
});

/** Moves a grant's expiresAt into the past, as time would. */
async function expire(userId: string, grantId: string): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: config().TABLE_NAME,
      Key: keys.grant(userId, grantId),
      UpdateExpression: 'SET expiresAt = :past',
      ExpressionAttributeValues: { ':past': new Date(Date.now() - 1000).toISOString() },
    }),
  );
}
