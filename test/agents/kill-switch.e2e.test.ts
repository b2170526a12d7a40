/**
 * The kill switch on the balance shards (DESIGN §18, docs/data-model.md "Kill switch"): an
 * operator's flip of `enabled` on the agent item in the DynamoDB console (a raw UpdateItem, as
 * the console sends it) reaches every shard through the table stream's fan-out and stops, or
 * starts, the agent's charges within 2 s; key rotation moves it to the new key at once.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { currentFunction } from '../../bin/local/function-scope';
import { config } from '../../functions/config';
import { hashKey } from '../../functions/core/keys';
import { backfillKillSwitch, fanOutRecords } from '../../functions/kill-switch/fanout';
import { db, dynamoRequestCounts, resetDynamoRequestCounts } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { auditAfterAll } from '../support/audit';
import { eventually } from '../support/eventually';
import { useTestStack } from '../support/stack';

const t = useTestStack();
auditAfterAll();

/** What the DynamoDB console sends when an operator edits `enabled` on the agent item. */
const consoleFlip = (agentKey: string, enabled: boolean) =>
  db().send(
    new UpdateCommand({
      TableName: config().TABLE_NAME,
      Key: keys.agent(hashKey(agentKey)),
      UpdateExpression: 'SET enabled = :e',
      ExpressionAttributeValues: { ':e': enabled },
    }),
  );

const shardsOf = async (agentId: string) =>
  Promise.all(
    Array.from({ length: config().BALANCE_SHARDS }, async (_, shard) => {
      const out = await db().send(
        new GetCommand({ TableName: config().TABLE_NAME, Key: keys.agentBalanceShard(agentId, shard), ConsistentRead: true }),
      );
      return out.Item ?? {};
    }),
  );

let seq = 0;
const charge = (agent: { key: string }, user: { key: string }, amount = 1) =>
  t.call<{ id: string; error?: string }>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `ks-${process.pid}-${++seq}` },
    raw: `{"amount":${amount},"currency":"USD"}`,
  });

const balances = async (userId: string) =>
  (await t.call<{ balances: { USD: number } }>('GET', `/api/v1/admin/users/${userId}`, { headers: t.admin })).body.balances;
const earned = async (agentKey: string) =>
  (await t.call<{ balances: { USD: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': agentKey } })).body.balances;

const REFUSED = [401, { error: 'invalid or disabled agent key' }];

describe('kill switch on the balance shards', () => {
  it('every shard carries the enabled key hash once the agent is enabled, and none while disabled', async () => {
    const agent = await t.enabledAgent();
    const hash = hashKey(agent.key);
    expect((await shardsOf(agent.id)).map((s) => s.enabledKeyHash)).toEqual(Array(config().BALANCE_SHARDS).fill(hash));
    await consoleFlip(agent.key, false);
    await eventually('every shard switched off', async () => (await shardsOf(agent.id)).every((s) => s.enabledKeyHash === undefined));
  });

  it('a console flip stops the agent charges within 2 s, and flipping back starts them within 2 s', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 100 });
    expect((await charge(agent, user)).status).toBe(201);
    // The auth cache of this process still says "enabled": only the shards' copy can refuse.
    let started = Date.now();
    await consoleFlip(agent.key, false);
    await eventually(
      'a charge refused after the console disabled the agent',
      async () => {
        const res = await charge(agent, user);
        return res.status === 201 ? false : [res.status, res.body];
      },
      { timeoutMs: 2_000, intervalMs: 20 },
    ).then((answer) => expect(answer).toEqual(REFUSED));
    const stopMs = Date.now() - started;
    started = Date.now();
    await consoleFlip(agent.key, true);
    await eventually('a charge accepted after the console enabled the agent', async () => (await charge(agent, user)).status === 201, {
      timeoutMs: 2_000,
      intervalMs: 20,
    });
    const startMs = Date.now() - started;
    process.stdout.write(`kill switch: console disable → charges refused in ${stopMs} ms; enable → accepted in ${startMs} ms\n`);
    expect(stopMs).toBeLessThan(2_000);
    expect(startMs).toBeLessThan(2_000);
  });

  it('charges in flight while the flag flips: none commits once every shard is off, and no money is lost', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 1000 });
    let switchedOffAt = Number.POSITIVE_INFINITY;
    const answers: { status: number; startedAt: number }[] = [];
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const startedAt = Date.now();
        const res = await charge(agent, user);
        answers.push({ status: res.status, startedAt });
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    await eventually('a few charges in', () => answers.length >= 8);
    const flippedAt = Date.now();
    await consoleFlip(agent.key, false);
    await eventually('every shard switched off', async () => (await shardsOf(agent.id)).every((s) => s.enabledKeyHash === undefined));
    switchedOffAt = Date.now();
    process.stdout.write(`kill switch: fan-out to every shard under 4 charging workers took ${switchedOffAt - flippedAt} ms\n`);
    await eventually('charges refused after the switch', () => answers.filter((a) => a.startedAt > switchedOffAt).length >= 8);
    stop = true;
    await Promise.all(workers);
    const after = answers.filter((a) => a.startedAt > switchedOffAt);
    expect(after.every((a) => a.status === 401)).toBe(true);
    expect(answers.every((a) => a.status === 201 || a.status === 401)).toBe(true);
    // Every 201 moved its money, nothing else did.
    const charged = answers.filter((a) => a.status === 201).length;
    expect(charged).toBeGreaterThan(0);
    expect(await balances(user.id)).toMatchObject({ USD: 1000 - charged });
    await consoleFlip(agent.key, true);
    await eventually(
      'enabled again',
      async () => {
        const res = await charge(agent, user, 0.01);
        expect([res.status, res.body]).toEqual([201, expect.anything()]);
        return true;
      },
      { timeoutMs: 2_000 },
    );
    // The agent earns the gross (the fee is taken at withdrawal).
    expect((await earned(agent.key)).USD).toBeCloseTo(charged + 0.01, 2);
  });

  it('the fan-out failing mid-way (before its write, then after it committed) is retried from its record and completes every shard', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    // The fan-out's copy is one transaction (the agent item checked unchanged, every shard written):
    // its first attempt dies before the write lands, its second after the write committed (the answer lost).
    const faults: string[] = [];
    const name = `fanout-fault-${process.pid}`;
    db().middlewareStack.add(
      (next) => async (args) => {
        const items = (args.input as { TransactItems?: { Update?: { Key?: { PK?: unknown } } }[] }).TransactItems ?? [];
        const mine =
          currentFunction() === 'kill-switch-fanout' &&
          items.some((i) => String(i.Update?.Key?.PK ?? '').startsWith(`AGENTBAL#${agent.id}#`));
        if (mine && faults.length === 0) {
          faults.push('before');
          throw Object.assign(new Error('injected: the fan-out dies before its write'), { name: 'InternalServerError' });
        }
        const result = await next(args);
        if (mine && faults.length === 1) {
          faults.push('after');
          throw Object.assign(new Error('injected: the fan-out dies after its write'), { name: 'InternalServerError' });
        }
        return result;
      },
      { step: 'initialize', name },
    );
    try {
      await consoleFlip(agent.key, false);
      await eventually('every shard switched off after the retries', async () =>
        (await shardsOf(agent.id)).every((s) => s.enabledKeyHash === undefined),
      );
      await eventually('both faults hit', () => faults.length === 2);
      expect(await charge(agent, user).then((r) => [r.status, r.body])).toEqual(REFUSED);
    } finally {
      db().middlewareStack.remove(name);
    }
  });

  it('a late or retried record of an older state never turns the switch back on', async () => {
    const agent = await t.enabledAgent();
    const hash = hashKey(agent.key);
    await consoleFlip(agent.key, false);
    await eventually('every shard switched off', async () => (await shardsOf(agent.id)).every((s) => s.enabledKeyHash === undefined));
    // The enabling's record again (its image says enabled): the fan-out copies the item as it is now.
    const image = marshall({ ...keys.agent(hash), type: 'Agent', agentId: agent.id, enabled: true });
    expect(await fanOutRecords([{ eventName: 'MODIFY', dynamodb: { Keys: marshall(keys.agent(hash)), NewImage: image } }])).toBeUndefined();
    expect((await shardsOf(agent.id)).every((s) => s.enabledKeyHash === undefined)).toBe(true);
  });

  it('of several records of one agent item in a batch only the last is copied: a flip does not wait behind stale copies', async () => {
    const agent = await t.enabledAgent();
    const hash = hashKey(agent.key);
    await consoleFlip(agent.key, false);
    await eventually('every shard switched off', async () => (await shardsOf(agent.id)).every((s) => s.enabledKeyHash === undefined));
    const record = (enabled: boolean, sequenceNumber: string) => ({
      eventName: 'MODIFY',
      dynamodb: {
        Keys: marshall(keys.agent(hash)),
        NewImage: marshall({ ...keys.agent(hash), type: 'Agent', agentId: agent.id, enabled }),
        SequenceNumber: sequenceNumber,
      },
    });
    resetDynamoRequestCounts();
    // Enabled, disabled, enabled, disabled: the last is the item's state, so one transaction and no
    // read of the agent item; a disabled agent's open tabs close at what they used (docs/tabs.md), so
    // the fan-out also asks for them: one Query of the agent's open tabs (none here).
    expect(await fanOutRecords([record(true, '1'), record(false, '2'), record(true, '3'), record(false, '4')])).toBeUndefined();
    expect(dynamoRequestCounts()).toEqual({ TransactWriteItemsCommand: 1, QueryCommand: 1 });
    expect((await shardsOf(agent.id)).every((s) => s.enabledKeyHash === undefined)).toBe(true);
  });

  it('key rotation moves the switch to the new key at once: the old key stops, whatever a cache says', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    expect((await charge(agent, user)).status).toBe(201);
    const rotated = await t.call<{ apiKey: string }>('POST', '/api/v1/agents/keys/rotate', { headers: { 'x-agent-key': agent.key } });
    expect(rotated.status).toBe(200);
    const shards = await shardsOf(agent.id);
    expect(shards.map((s) => [s.enabledKeyHash, s.killSwitchGen])).toEqual(
      Array(config().BALANCE_SHARDS).fill([hashKey(rotated.body.apiKey), 1]),
    );
    expect(await charge(agent, user).then((r) => [r.status, r.body])).toEqual(REFUSED);
    expect((await charge({ key: rotated.body.apiKey }, user)).status).toBe(201);
    // The old item's REMOVE record (and any late record of it) leaves the new key's copy alone.
    expect(
      await fanOutRecords([
        {
          eventName: 'REMOVE',
          dynamodb: {
            Keys: marshall(keys.agent(hashKey(agent.key))),
            OldImage: marshall({ type: 'Agent', agentId: agent.id, enabled: true }),
          },
        },
      ]),
    ).toBeUndefined();
    expect((await shardsOf(agent.id)).every((s) => s.enabledKeyHash === hashKey(rotated.body.apiKey))).toBe(true);
    expect((await balances(user.id)).USD).toBe(8);
  });
});

describe('kill switch backfill (the deploy that introduces the copy)', () => {
  it('gives shards written without a copy the agent item state, for one agent or all, and is safe to repeat', async () => {
    const enabled = await t.enabledAgent();
    const disabled = await t.enabledAgent();
    await t.call('PATCH', `/api/v1/admin/agents/${disabled.id}`, { headers: t.admin, body: { enabled: false } });
    const user = await t.fundedUser({ USD: 10 });
    // Shards as an older release left them: no copy at all.
    for (const agent of [enabled, disabled]) {
      for (let shard = 0; shard < config().BALANCE_SHARDS; shard++) {
        await db().send(
          new UpdateCommand({
            TableName: config().TABLE_NAME,
            Key: keys.agentBalanceShard(agent.id, shard),
            UpdateExpression: 'REMOVE enabledKeyHash, killSwitchGen',
          }),
        );
      }
    }
    expect(await charge(enabled, user).then((r) => r.status)).toBe(401);
    expect(await backfillKillSwitch({ agentId: enabled.id })).toEqual({ agents: 1, failed: [] });
    expect((await charge(enabled, user)).status).toBe(201);
    const all = await backfillKillSwitch();
    expect(all.failed).toEqual([]);
    expect(all.agents).toBeGreaterThanOrEqual(2);
    expect((await shardsOf(enabled.id)).every((s) => s.enabledKeyHash === hashKey(enabled.key) && s.killSwitchGen === 0)).toBe(true);
    expect((await shardsOf(disabled.id)).every((s) => s.enabledKeyHash === undefined && s.killSwitchGen === 0)).toBe(true);
    expect((await charge(enabled, user)).status).toBe(201);
  });
});
