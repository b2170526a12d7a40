/**
 * `GET /api/v1/admin/agents`: the operator's list of agents, newest first, by state — who waits to
 * be enabled (`enabled=false`), who may charge (`true`), or both — read from an index by state
 * (never a Scan: the route's grant is that index's partitions alone, checked on every request).
 * The list follows the flag wherever it is set: registration, the admin PATCH, and an operator's
 * edit in the DynamoDB console (the kill switch's fan-out mends the entry).
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { config } from '../../functions/config';
import { hashKey } from '../../functions/core/keys';
import { fanOutRecords } from '../../functions/kill-switch/fanout';
import { db, dynamoRequestCounts, resetDynamoRequestCounts } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { auditAfterAll } from '../support/audit';
import { eventually } from '../support/eventually';
import { useTestStack } from '../support/stack';

const t = useTestStack();
auditAfterAll();

type AgentList = { data: { id: string; name: string; enabled: boolean }[]; nextCursor: string | null };

const register = async (name: string) => {
  const res = await t.call<{ apiKey: string; agentId: string }>('POST', '/api/v1/agents/register', {
    body: { name, email: 'dev@example.com', website: 'https://example.com' },
  });
  expect(res.status).toBe(201);
  return { key: res.body.apiKey, id: res.body.agentId };
};
const list = (query: string) => t.call<AgentList>('GET', `/api/v1/admin/agents${query}`, { headers: t.admin });
const ids = async (query: string) => {
  const res = await list(query);
  expect(res.status).toBe(200);
  return res.body.data.map((a) => a.id);
};
/** Every page of a list, following nextCursor. */
async function allPages(query: string): Promise<{ ids: string[]; pages: number }> {
  const out: string[] = [];
  let pages = 0;
  let next: string | null = query;
  while (next !== null) {
    const res: Awaited<ReturnType<typeof list>> = await list(next);
    expect(res.status).toBe(200);
    pages += 1;
    out.push(...res.body.data.map((a) => a.id));
    next = res.body.nextCursor === null ? null : `?cursor=${encodeURIComponent(res.body.nextCursor)}`;
  }
  return { ids: out, pages };
}

const consoleEdit = (agentKey: string, update: string, values?: Record<string, unknown>) =>
  db().send(
    new UpdateCommand({
      TableName: config().TABLE_NAME,
      Key: keys.agent(hashKey(agentKey)),
      UpdateExpression: update,
      ...(values ? { ExpressionAttributeValues: values } : {}),
    }),
  );

describe('GET /api/v1/admin/agents', () => {
  it('lists the agents waiting to be enabled, newest first, and moves one when the operator enables it', async () => {
    const first = await register(`first-${Date.now()}`);
    const second = await register(`second-${Date.now()}`);
    const third = await register(`third-${Date.now()}`);
    const pending = await list('?enabled=false');
    expect(pending.body.data.slice(0, 3)).toEqual([
      expect.objectContaining({ id: third.id, enabled: false }),
      expect.objectContaining({ id: second.id, enabled: false }),
      expect.objectContaining({ id: first.id, enabled: false }),
    ]);
    expect(pending.body.data[0]).toEqual({
      id: third.id,
      name: expect.stringMatching(/^third-/),
      email: 'dev@example.com',
      website: 'https://example.com',
      enabled: false,
      createdAt: expect.any(String),
    });

    expect((await t.call('PATCH', `/api/v1/admin/agents/${second.id}`, { headers: t.admin, body: { enabled: true } })).status).toBe(200);
    expect(await ids('?enabled=false')).not.toContain(second.id);
    expect(await ids('?enabled=true')).toContain(second.id);
    // Both states, merged newest first.
    expect((await ids('')).filter((id) => [first.id, second.id, third.id].includes(id))).toEqual([third.id, second.id, first.id]);
    expect((await t.call('PATCH', `/api/v1/admin/agents/${second.id}`, { headers: t.admin, body: { enabled: false } })).status).toBe(200);
    expect(await ids('?enabled=false')).toContain(second.id);
  });

  it('pages with nextCursor through one list, each agent once, and refuses a cursor used for another', async () => {
    for (let i = 0; i < 5; i++) await register(`paged-${i}-${Date.now()}`);
    const whole = await ids('?enabled=false&limit=100');
    const paged = await allPages('?enabled=false&limit=2');
    expect(paged.ids).toEqual(whole);
    expect(paged.pages).toBe(Math.ceil(whole.length / 2));
    const both = await allPages('?limit=3');
    expect(new Set(both.ids).size).toBe(both.ids.length);
    expect(both.ids).toEqual(await ids('?limit=100'));

    const cursor = (await list('?enabled=false&limit=2')).body.nextCursor as string;
    const refused = async (query: string, error: string) => {
      const res = await list(query);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { error } });
    };
    await refused(`?enabled=true&cursor=${encodeURIComponent(cursor)}`, 'cursor is invalid');
    await refused(`?limit=3&cursor=${encodeURIComponent(cursor)}`, 'cursor is invalid');
    // The same filter and limit beside their cursor are fine.
    expect((await list(`?enabled=false&limit=2&cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
    await refused('?cursor=bm90LWEtY3Vyc29y', 'cursor is invalid');
    await refused('?enabled=no', 'enabled must be one of true, false');
    await refused('?limit=101', 'limit must be at most 100');
    await refused('?pending=1', 'unknown field: pending');
  });

  it("follows an operator's edit in the DynamoDB console, and lists an agent whose entry is missing", async () => {
    const agent = await register(`console-${Date.now()}`);
    await consoleEdit(agent.key, 'SET enabled = :e', { ':e': true });
    await eventually('the console-enabled agent in the enabled list', async () => (await ids('?enabled=true')).includes(agent.id), {
      timeoutMs: 5_000,
    });
    expect(await ids('?enabled=false')).not.toContain(agent.id);
    // A string "true" does not enable (docs/operating/runbooks.md, "Enable (or disable) an agent"): listed as waiting.
    await consoleEdit(agent.key, 'SET enabled = :e', { ':e': 'true' });
    await eventually('the agent back in the waiting list', async () => (await ids('?enabled=false')).includes(agent.id), {
      timeoutMs: 5_000,
    });
    expect((await list('?enabled=false')).body.data.find((a) => a.id === agent.id)?.enabled).toBe(false);
    // An agent item without its entry (registered before the list existed) is listed once the
    // fan-out sees it (on AWS: the next edit, or `npm run admin -- kill-switch-backfill`).
    await consoleEdit(agent.key, 'REMOVE GSI2PK, GSI2SK');
    await eventually('the agent listed again', async () => (await ids('?enabled=false')).includes(agent.id), { timeoutMs: 5_000 });
  });

  it('costs the fan-out nothing more when the record is its own mending of the entry (the shards were written with it)', async () => {
    const agent = await register(`mended-${Date.now()}`);
    const item = { ...keys.agent(hashKey(agent.key)), type: 'Agent', agentId: agent.id, enabled: false };
    const mended = {
      eventName: 'MODIFY',
      dynamodb: {
        Keys: marshall(keys.agent(hashKey(agent.key))),
        OldImage: marshall({ ...item, ...keys.agentStateIndex(agent.id, true) }),
        NewImage: marshall({ ...item, ...keys.agentStateIndex(agent.id, false) }),
        SequenceNumber: '1',
      },
    };
    resetDynamoRequestCounts();
    expect(await fanOutRecords([mended])).toBeUndefined();
    expect(dynamoRequestCounts()).toEqual({});
    // Anything else changed beside it (here `enabled`): copied as ever, in one transaction; a disabled
    // agent's open tabs are closed too, so one Query asks for them (none here: docs/tabs.md).
    const flipped = {
      ...mended,
      dynamodb: { ...mended.dynamodb, OldImage: marshall({ ...item, enabled: true, ...keys.agentStateIndex(agent.id, true) }) },
    };
    expect(await fanOutRecords([flipped])).toBeUndefined();
    expect(dynamoRequestCounts()).toEqual({ TransactWriteItemsCommand: 1, QueryCommand: 1 });
  });
});
