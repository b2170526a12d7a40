/**
 * The creations whose answer holds a secret shown once take an optional Idempotency-Key (DESIGN §24,
 * docs/idempotency.md "Creations"): registration, the operator's new user, a grant, a webhook
 * endpoint (an agent's and a payer's). Against the local stack:
 * - an answer lost after the write (the transaction committed, its answer lost: injected at the
 *   service's own DynamoDB client) is given again by a retry with the same key, the same secret
 *   included, and nothing is made twice;
 * - the same key and body again → the same status and body, `Idempotent-Replayed: true`; another
 *   body → 422 with the charges' text;
 * - without the header, nothing is stored and nothing replays (as before);
 * - the table holds no secret in clear (no `ag_live_`, `uk_live_`, `ug_live_`, `whsec_`), nor the
 *   Idempotency-Key: the record is under the key's hash, its answer sealed;
 * - after the window (the record's TTL) a replay is treated like a charge's expired key: the request
 *   runs anew, and the secret is not given.
 */
import { hash, randomUUID } from 'node:crypto';
import { GetCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { hashKey } from '../../functions/core/keys';
import { db } from '../../functions/store/client';
import { openSecret } from '../../functions/store/events/webhook-secret';
import { keys, TTL_ATTRIBUTE } from '../../functions/store/table';
import { inject, timedOut, writesIdempotencyRecord } from '../faults/inject';
import { auditAfterAll } from '../support/audit';
import type { Reply } from '../support/http';
import { useTestStack } from '../support/stack';

const t = useTestStack();
auditAfterAll();

const SECRET_PREFIXES = /ag_live_|uk_live_|ug_live_|whsec_/;
const URL = 'http://127.0.0.1:9/hook';
let n = 0;
const unique = (what: string) => `${what}-${process.pid}-${Date.now()}-${++n}`;

type Body = Record<string, unknown>;

async function scanAll(): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new ScanCommand({ TableName: config().TABLE_NAME, ConsistentRead: true, ...(start ? { ExclusiveStartKey: start } : {}) }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

const idempotencyItems = async () => (await scanAll()).filter((item) => String(item.PK).startsWith('IDEM#'));

/** The record of `key` in `scope`, as the table holds it: under the key's hash. */
const recordKey = (scope: string, key: string) => keys.idempotency(scope, `sha256:${hash('sha256', key, 'hex')}`);

/** One creation, as a client makes it: `variant` changes the body (0: the first body). */
interface Creation {
  name: string;
  /** Before each test: a fresh body (registration: a new name). */
  fresh(): void;
  /** The record's scope (docs/idempotency.md "Creations"). */
  scope(): string;
  send(key: string | undefined, variant?: number): Promise<Reply<Body>>;
  /** The secret of an answer, and whether it is the one the table's creation stands for. */
  secret(body: Body): string;
  isReal(body: Body): Promise<boolean>;
  /** How many of these the caller has now. */
  count(): Promise<number>;
}

let payer: { key: string; id: string };
let agent: { key: string; id: string };
let grantee: { key: string; id: string };
let name = '';
const same = () => undefined;

const creations: Creation[] = [
  {
    name: 'registration',
    fresh: () => {
      name = unique('idem-agent');
    },
    scope: () => 'public#register',
    send: (key, variant = 0) => {
      return t.call<Body>('POST', '/api/v1/agents/register', {
        headers: key === undefined ? {} : { 'idempotency-key': key },
        body: { name, email: variant === 0 ? 'dev@example.com' : 'other@example.com', website: 'https://example.com' },
      });
    },
    secret: (body) => String(body.apiKey),
    isReal: async (body) => {
      const item = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.agent(hashKey(String(body.apiKey))) }));
      return item.Item?.agentId === body.agentId;
    },
    count: async () => (await scanAll()).filter((item) => item.type === 'Agent' && item.name === name).length,
  },
  {
    name: "the operator's new user",
    fresh: same,
    scope: () => 'admin#users',
    send: (key) =>
      t.call<Body>('POST', '/api/v1/admin/users', { headers: { ...t.admin, ...(key === undefined ? {} : { 'idempotency-key': key }) } }),
    secret: (body) => String(body.userKey),
    isReal: async (body) => {
      const me = await t.call<Body>('GET', '/api/v1/users/me', { headers: { 'x-user-key': String(body.userKey) } });
      return me.status === 200 && me.body.id === body.id;
    },
    count: async () => (await scanAll()).filter((item) => item.type === 'User').length,
  },
  {
    name: 'a grant',
    fresh: same,
    scope: () => `${payer.id}#grants`,
    send: (key, variant = 0) =>
      t.call<Body>('POST', '/api/v1/users/me/grants', {
        headers: { 'x-user-key': payer.key, ...(key === undefined ? {} : { 'idempotency-key': key }) },
        body: { agentId: grantee.id, currency: 'USD', limits: { total: variant === 0 ? 5 : 6 }, description: 'idempotent grant' },
      }),
    secret: (body) => String(body.key),
    isReal: async (body) => {
      const item = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.grantKey(hashKey(String(body.key))) }));
      return item.Item?.grantId === body.id;
    },
    count: async () =>
      (
        (await t.call<{ data: unknown[] }>('GET', '/api/v1/users/me/grants?limit=100', { headers: { 'x-user-key': payer.key } })).body
          .data ?? []
      ).length,
  },
  {
    name: "an agent's webhook endpoint",
    fresh: same,
    scope: () => `${agent.id}#webhooks`,
    send: (key, variant = 0) =>
      t.call<Body>('POST', '/api/v1/agents/webhooks', {
        headers: { 'x-agent-key': agent.key, ...(key === undefined ? {} : { 'idempotency-key': key }) },
        body: { url: variant === 0 ? URL : `${URL}/other` },
      }),
    secret: (body) => String(body.secret),
    isReal: (body) => webhookSecretIs(`agent#${agent.id}`, body),
    count: async () =>
      (await t.call<{ webhooks: unknown[] }>('GET', '/api/v1/agents/webhooks', { headers: { 'x-agent-key': agent.key } })).body.webhooks
        .length,
  },
  {
    name: "a payer's webhook endpoint",
    fresh: same,
    scope: () => `${payer.id}#webhooks`,
    send: (key, variant = 0) =>
      t.call<Body>('POST', '/api/v1/users/me/webhooks', {
        headers: { 'x-user-key': payer.key, ...(key === undefined ? {} : { 'idempotency-key': key }) },
        body: { url: URL, ...(variant === 0 ? {} : { events: ['charge.succeeded'] }) },
      }),
    secret: (body) => String(body.secret),
    isReal: (body) => webhookSecretIs(`user#${payer.id}`, body),
    count: async () =>
      (await t.call<{ webhooks: unknown[] }>('GET', '/api/v1/users/me/webhooks', { headers: { 'x-user-key': payer.key } })).body.webhooks
        .length,
  },
];

/** Whether the endpoint the answer names is stored with the answer's signing secret (sealed). */
async function webhookSecretIs(owner: string, body: Body): Promise<boolean> {
  const item = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.webhook(owner, String(body.id)) }));
  const sealed = item.Item?.sealedSecret;
  return typeof sealed === 'string' && (await openSecret(sealed, { owner, webhookId: String(body.id) })) === body.secret;
}

beforeAll(async () => {
  payer = await t.fundedUser({ USD: 10 });
  agent = await t.enabledAgent();
  grantee = await t.enabledAgent();
});

describe.each(creations)('$name with an Idempotency-Key', (c) => {
  it('gives an answer lost after the write again, the same secret included, and makes nothing twice', async () => {
    const key = randomUUID();
    c.fresh();
    const before = await c.count();
    const lost = inject({
      command: 'TransactWriteItemsCommand',
      match: writesIdempotencyRecord,
      times: 1,
      error: timedOut,
      where: 'after-response',
    });
    let first: Reply<Body>;
    try {
      first = await c.send(key);
    } finally {
      lost.remove();
    }
    expect(lost.hits()).toBe(1);
    // The transaction committed; its answer never came back.
    expect(first.status).toBe(503);
    expect(first.text).not.toMatch(SECRET_PREFIXES);
    expect(await c.count()).toBe(before + 1);

    const retry = await c.send(key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await c.isReal(retry.body)).toBe(true);
    const again = await c.send(key);
    expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([201, retry.text, 'true']);
    expect(await c.count()).toBe(before + 1);
  });

  it('answers the same key and body with the first answer, byte for byte; another body with 422', async () => {
    const key = randomUUID();
    c.fresh();
    const first = await c.send(key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const before = await c.count();
    const replay = await c.send(key);
    expect([replay.status, replay.text, replay.headers.get('idempotent-replayed')]).toEqual([201, first.text, 'true']);
    expect(c.secret(replay.body)).toBe(c.secret(first.body));
    expect(await c.isReal(replay.body)).toBe(true);
    if (c.name !== "the operator's new user") {
      // The operator's create takes no body: a key is always the same request.
      const other = await c.send(key, 1);
      expect([other.status, other.body]).toEqual([422, { error: 'idempotency key reused with different request' }]);
      expect(other.headers.get('idempotent-replayed')).toBeNull();
    }
    expect(await c.count()).toBe(before);
  });

  it('keeps the record under the key’s hash, its answer sealed: neither the key nor the secret is in the table', async () => {
    const key = randomUUID();
    c.fresh();
    const made = await c.send(key);
    expect(made.status).toBe(201);
    const record = await db().send(
      new GetCommand({ TableName: config().TABLE_NAME, Key: recordKey(c.scope(), key), ConsistentRead: true }),
    );
    expect(record.Item).toBeDefined();
    const text = JSON.stringify(record.Item);
    expect(String(record.Item?.body)).toMatch(/^seal1\.\d+\./);
    expect(text).not.toContain(key);
    expect(text).not.toContain(c.secret(made.body));
    expect(text).not.toMatch(SECRET_PREFIXES);
  });

  it('treats a replay after the window like a charge’s expired key: the request runs anew, the secret is not given', async () => {
    const key = randomUUID();
    c.fresh();
    const made = await c.send(key);
    expect(made.status).toBe(201);
    // The TTL attribute says the window is over (DynamoDB's deletion lags: the item is still there).
    await db().send(
      new UpdateCommand({
        TableName: config().TABLE_NAME,
        Key: recordKey(c.scope(), key),
        UpdateExpression: 'SET #ttl = :past',
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 },
      }),
    );
    const later = await c.send(key);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    if (c.name === 'registration') {
      // As a retry without the header: the name is the first request's.
      expect([later.status, later.body]).toEqual([409, { error: 'agent name already taken' }]);
    } else {
      expect(later.status).toBe(201);
      expect(c.secret(later.body)).not.toBe(c.secret(made.body));
    }
  });
});

describe.each(creations)('$name without an Idempotency-Key', (c) => {
  it('runs as before: nothing stored, nothing replayed', async () => {
    c.fresh();
    const records = (await idempotencyItems()).length;
    const first = await c.send(undefined);
    expect(first.status).toBe(201);
    const second = await c.send(undefined);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    if (c.name === 'registration') expect([second.status, second.body]).toEqual([409, { error: 'agent name already taken' }]);
    else expect(c.secret(second.body)).not.toBe(c.secret(first.body));
    expect((await idempotencyItems()).length).toBe(records);
  });
});

describe('the table', () => {
  it('holds no secret in clear: no ag_live_, uk_live_, ug_live_ or whsec_ in any item', async () => {
    const items = await scanAll();
    expect(items.filter((item) => String(item.PK).startsWith('IDEM#')).length).toBeGreaterThan(10);
    const clear = items.filter((item) => SECRET_PREFIXES.test(JSON.stringify(item))).map((item) => String(item.PK));
    expect(clear).toEqual([]);
  });

  it('refuses a malformed key with 400, as charges do', async () => {
    const res = await t.call('POST', '/api/v1/admin/users', { headers: { ...t.admin, 'idempotency-key': 'x'.repeat(256) } });
    expect([res.status, res.body]).toEqual([400, { error: 'Idempotency-Key must be 1-255 printable ASCII characters' }]);
  });
});
