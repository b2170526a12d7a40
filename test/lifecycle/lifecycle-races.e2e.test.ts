/**
 * The charge lifecycle under races and faults (docs/design.md §12), over HTTP against the local
 * stack, the ledger audit after each: capture vs release vs the sweeper (one wins, money moves
 * once); approve, decline, capture and release against each other (a 200 shows its own
 * transition, a loser answers 409); 20 concurrent partial refunds that together exceed the charge; refund vs withdrawal of the
 * same earned money; key rotation vs charges; and TransactionConflict / a lost answer on capture
 * and refund.
 */
import { BatchGetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { hashKey } from '../../functions/core/keys';
import { readAgentLedger } from '../../functions/store/charges/balance.repository';
import { db } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { expireDueCharges } from '../../functions/use-cases/charges/expiry';
import { inject, transactionConflict } from '../faults/inject';
import { captureCharge, refundCharge } from '../support/answers';
import { expectLedgerBalanced } from '../support/audit';
import { afterCommand, inputText } from '../support/interleave';
import { useTestStack } from '../support/stack';

const t = useTestStack({}, { sweepIntervalMs: 0 });
// Several tests race many rounds (up to 25) of concurrent requests: on a loaded 2-core runner a
// round's DynamoDB Local answers take seconds, and 60 s was seen to run out mid-loop with every
// round correct so far. Correctness is what each round asserts; the time is the runner's.
jest.setTimeout(240_000);
afterEach(async () => {
  await expectLedgerBalanced();
});

type Charge = {
  id: string;
  status: string;
  amount: number;
  refundedAmount: number;
  expiresAt: string | null;
  failureReason?: string | null;
  error?: string;
};
let n = 0;
const key = () => `r-${Date.now()}-${++n}`;
const create = (agentKey: string, userKey: string, body: Record<string, unknown>, idem = key()) =>
  t.call<Charge>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': idem },
    body: { currency: 'USD', description: 'race', ...body },
  });
const act = (agentKey: string, id: string, action: 'capture' | 'release' | 'refund', body?: unknown, idem = key()) =>
  t.call<Charge>('POST', `/api/v1/agents/charge/${id}/${action}`, {
    headers: { 'x-agent-key': agentKey, 'idempotency-key': idem },
    ...(body === undefined ? {} : { body }),
  });
const balances = async (userId: string) =>
  (await t.call<{ balances: { USD: number } }>('GET', `/api/v1/admin/users/${userId}`, { headers: t.admin })).body.balances.USD;
const held = async (userKey: string) =>
  (await t.call<{ held: { USD: number } }>('GET', '/api/v1/users/me', { headers: { 'x-user-key': userKey } })).body.held.USD;
const earned = async (agentKey: string) =>
  (await t.call<{ balances: { USD: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': agentKey } })).body.balances
    .USD;
const decide = (userKey: string, id: string, action: 'approve' | 'decline') =>
  t.call<Charge & { pendingReason: string | null; failureReason: string | null }>('POST', `/api/v1/users/me/charges/${id}/${action}`, {
    headers: { 'x-user-key': userKey },
  });
const chargeOf = async (agentKey: string, id: string) =>
  (await t.call<Charge>('GET', `/api/v1/agents/charge/${id}`, { headers: { 'x-agent-key': agentKey } })).body;
/** A user who approves anything above 10 USD, and a 20 USD hold that waits for that approval (202). */
async function heldForApproval(): Promise<{ user: { key: string; id: string }; agent: { key: string; id: string }; id: string }> {
  const user = await t.fundedUser({ USD: 50 });
  const agent = await t.enabledAgent();
  const policy = await t.call('PUT', '/api/v1/users/me/policy', {
    headers: { 'x-user-key': user.key },
    body: { approvalAbove: { USD: 10 } },
  });
  expect(policy.status).toBe(200);
  const hold = await create(agent.key, user.key, { amount: 20, capture: false, holdSeconds: 7200 });
  expect([hold.status, hold.body.status]).toEqual([202, 'PENDING']);
  return { user, agent, id: hold.body.id };
}
const withdraw = (agentKey: string, amount: number) =>
  t.call<{ success?: boolean; error?: string }>('POST', '/api/v1/agents/withdraw', {
    headers: { 'x-agent-key': agentKey, 'idempotency-key': key() },
    body: { amount, currency: 'USD', walletAddress: 'payee@example.com' },
  });

it('capture vs release vs the sweeper: exactly one wins, and the money moves once', async () => {
  const winners: string[] = [];
  for (let round = 0; round < 6; round++) {
    const user = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const hold = await create(agent.key, user.key, { amount: 4, capture: false, holdSeconds: 60 });
    expect(hold.status).toBe(201);
    // The sweeper runs as if the hold were due; the agent's calls run now, before it is.
    const dueAt = new Date(Date.parse(hold.body.expiresAt ?? '') + 1000);
    const [captured, released, swept] = await Promise.all([
      act(agent.key, hold.body.id, 'capture', { amount: 1.5 }),
      act(agent.key, hold.body.id, 'release'),
      expireDueCharges(dueAt),
    ]);
    const won = [captured.status === 200 && 'capture', released.status === 200 && 'release', swept.expired === 1 && 'sweeper'].filter(
      Boolean,
    );
    expect(won).toHaveLength(1);
    winners.push(String(won[0]));
    for (const lost of [captured, released].filter((r) => r.status !== 200)) {
      expect(lost.status).toBe(409);
      expect(['charge is not pending', 'charge expired']).toContain(lost.body.error);
    }
    const final = (await t.call<Charge>('GET', `/api/v1/agents/charge/${hold.body.id}`, { headers: { 'x-agent-key': agent.key } })).body;
    expect(final.status).toBe({ capture: 'SUCCESS', release: 'FAILED', sweeper: 'EXPIRED' }[String(won[0])]);
    expect(await held(user.key)).toBe(0);
    expect(await balances(user.id)).toBe(won[0] === 'capture' ? 8.5 : 10);
    expect(await earned(agent.key)).toBe(won[0] === 'capture' ? 1.5 : 0);
  }
  // Not an assertion on who wins (DynamoDB Local serialises), only that someone always did.
  expect(winners).toHaveLength(6);
});

describe('settlement races: a 200 shows the state its own transition produced, a loser answers 409', () => {
  it("an approve whose hold the agent releases before the approve answers: 200 shows the hold as the approval left it, not the release's FAILED", async () => {
    const { user, agent, id } = await heldForApproval();
    let released: Awaited<ReturnType<typeof act>> | undefined;
    // The release commits right after the approval's transaction, before the approve answers.
    const between = afterCommand({
      command: 'TransactWriteItemsCommand',
      match: (input) => inputText(input).includes('approvedAt') && inputText(input).includes(id),
      between: async () => {
        released = await act(agent.key, id, 'release');
      },
    });
    const approved = await decide(user.key, id, 'approve').finally(() => between.remove());
    expect(between.fired()).toBe(true);
    expect([released?.status, released?.body.status]).toEqual([200, 'FAILED']);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ id, status: 'PENDING', pendingReason: 'capture', failureReason: null });
    expect(await chargeOf(agent.key, id)).toMatchObject({ status: 'FAILED', failureReason: 'released by agent' });
    expect([await balances(user.id), await held(user.key), await earned(agent.key)]).toEqual([50, 0, 0]);
  });

  it('a release that read the hold before the user approved it: 200 shows the charge as the release left it', async () => {
    const { user, agent, id } = await heldForApproval();
    // The user approves right after the release has read the charge, before it writes.
    const between = afterCommand({
      command: 'GetItemCommand',
      match: (input) => inputText(input).includes(`CHARGES#${agent.id}`) && inputText(input).includes(id),
      between: async () => expect((await decide(user.key, id, 'approve')).body).toMatchObject({ pendingReason: 'capture' }),
    });
    const released = await act(agent.key, id, 'release').finally(() => between.remove());
    expect(between.fired()).toBe(true);
    expect([released.status, released.body.status]).toEqual([200, 'FAILED']);
    // Its expiresAt is the one the approval set: the answer is the charge as it now is.
    expect(released.body).toEqual(await chargeOf(agent.key, id));
    expect([await balances(user.id), await held(user.key), await earned(agent.key)]).toEqual([50, 0, 0]);
  });

  it('approve vs release of a held charge, racing: release always ends it; approve answers 200 PENDING (first) or 409 charge is not pending', async () => {
    for (let round = 0; round < 6; round++) {
      const { user, agent, id } = await heldForApproval();
      const [approved, released] = await Promise.all([decide(user.key, id, 'approve'), act(agent.key, id, 'release')]);
      expect([released.status, released.body.status, released.body.failureReason]).toEqual([200, 'FAILED', 'released by agent']);
      if (approved.status === 200) expect(approved.body).toMatchObject({ status: 'PENDING', pendingReason: 'capture' });
      else expect([approved.status, approved.body]).toEqual([409, { error: 'charge is not pending' }]);
      expect(await chargeOf(agent.key, id)).toEqual(released.body);
      expect([await balances(user.id), await held(user.key), await earned(agent.key)]).toEqual([50, 0, 0]);
    }
  });

  it('capture vs decline, racing: on a hold awaiting approval the decline wins; on an approved one the capture; the other answers 409', async () => {
    for (let round = 0; round < 4; round++) {
      const waiting = await heldForApproval();
      const [captured, declined] = await Promise.all([
        act(waiting.agent.key, waiting.id, 'capture', { amount: 15 }),
        decide(waiting.user.key, waiting.id, 'decline'),
      ]);
      expect([declined.status, declined.body.status, declined.body.failureReason]).toEqual([200, 'FAILED', 'declined by user']);
      // Before the decline it was not the agent's to capture; after it, not pending.
      expect(captured.status).toBe(409);
      expect(['charge awaits user approval', 'charge is not pending']).toContain(captured.body.error);
      expect(await chargeOf(waiting.agent.key, waiting.id)).toEqual(declined.body);
      expect([await balances(waiting.user.id), await held(waiting.user.key), await earned(waiting.agent.key)]).toEqual([50, 0, 0]);

      const approved = await heldForApproval();
      expect((await decide(approved.user.key, approved.id, 'approve')).status).toBe(200);
      const [capture, decline] = await Promise.all([
        act(approved.agent.key, approved.id, 'capture', { amount: 15 }),
        decide(approved.user.key, approved.id, 'decline'),
      ]);
      expect([capture.status, capture.body.status, capture.body.amount]).toEqual([200, 'SUCCESS', 15]);
      expect([decline.status, decline.body]).toEqual([409, { error: 'charge is not pending' }]);
      expect(await chargeOf(approved.agent.key, approved.id)).toEqual(capture.body);
      expect([await balances(approved.user.id), await held(approved.user.key), await earned(approved.agent.key)]).toEqual([35, 0, 15]);
    }
  });

  it('approve, decline, capture and release all at once: one ends it, every 200 shows its own transition, every loser 409', async () => {
    const shows = {
      approve: { status: 'PENDING', pendingReason: 'capture' },
      decline: { status: 'FAILED', failureReason: 'declined by user' },
      capture: { status: 'SUCCESS', amount: 15 },
      release: { status: 'FAILED', failureReason: 'released by agent' },
    } as const;
    for (let round = 0; round < 6; round++) {
      const { user, agent, id } = await heldForApproval();
      const replies = await Promise.all([
        decide(user.key, id, 'approve'),
        decide(user.key, id, 'decline'),
        act(agent.key, id, 'capture', { amount: 15 }),
        act(agent.key, id, 'release'),
      ]);
      const results = Object.fromEntries((['approve', 'decline', 'capture', 'release'] as const).map((a, i) => [a, replies[i]])) as Record<
        keyof typeof shows,
        (typeof replies)[number]
      >;
      const ended = (['decline', 'capture', 'release'] as const).filter((a) => results[a].status === 200);
      expect(ended).toHaveLength(1);
      for (const [action, reply] of Object.entries(results) as [keyof typeof shows, (typeof replies)[number]][]) {
        if (reply.status === 200) expect({ action, body: reply.body }).toMatchObject({ action, body: shows[action] });
        else {
          expect({ action, status: reply.status }).toEqual({ action, status: 409 });
          const allowed = action === 'capture' ? ['charge is not pending', 'charge awaits user approval'] : ['charge is not pending'];
          expect(allowed).toContain(reply.body.error);
        }
      }
      const winner = ended[0] as 'decline' | 'capture' | 'release';
      expect(await chargeOf(agent.key, id)).toEqual(results[winner].body);
      const paid = winner === 'capture' ? 15 : 0;
      expect([await balances(user.id), await held(user.key), await earned(agent.key)]).toEqual([50 - paid, 0, paid]);
    }
  });
});

describe('refunds from sharded earnings: a debit the agent covers in all is never refused for one shard, and the refundable check wins', () => {
  const table = () => config().TABLE_NAME;
  const shardPk = (agentId: string, shard: number) => keys.agentBalanceShard(agentId, shard).PK;
  type Item = Record<string, unknown>;
  const itemsOf = (output: unknown) => ((output as { Responses?: Record<string, Item[]> }).Responses?.[table()] ?? []) as Item[];
  const withItems = (output: unknown, items: Item[]) => ({
    ...(output as object),
    Responses: { [table()]: items },
    UnprocessedKeys: {},
  });
  /** The same BatchGetItem again, now (the interleaving lets it through). */
  const readAgain = async (input: Record<string, unknown>) =>
    db().send(new BatchGetCommand({ RequestItems: (input as { RequestItems: BatchGetCommand['input']['RequestItems'] }).RequestItems }));

  /**
   * Moves the agent's USD between shards, its total unchanged at every instant (one transaction,
   * each shard conditioned on what was read): what a charge crediting one shard and a withdrawal
   * debiting another amount to, without either. `to`: the USD of each shard, in minor units.
   */
  async function rebalance(agentId: string, to: number[]): Promise<void> {
    const ledger = await readAgentLedger(agentId);
    const from = Array.from({ length: config().BALANCE_SHARDS }, (_, i) => ledger.shards.find((x) => x.shard === i)?.balances.USD ?? 0);
    expect(to.reduce((a, b) => a + b, 0)).toBe(ledger.balances.USD);
    await db().send(
      new TransactWriteCommand({
        TransactItems: from.flatMap((was, shard) =>
          (to[shard] ?? 0) === was
            ? []
            : [
                {
                  Update: {
                    TableName: table(),
                    Key: keys.agentBalanceShard(agentId, shard),
                    UpdateExpression: 'SET USD = :to, agentId = :agent, #type = :type',
                    ConditionExpression: was === 0 ? 'attribute_not_exists(USD) OR USD = :zero' : 'USD = :was',
                    ExpressionAttributeNames: { '#type': 'type' },
                    ExpressionAttributeValues: {
                      ':to': to[shard] ?? 0,
                      ':agent': agentId,
                      ':type': 'AgentBalanceShard',
                      ...(was === 0 ? { ':zero': 0 } : { ':was': was }),
                    },
                  },
                },
              ],
        ),
      }),
    );
  }
  const shardHolding = async (agentId: string) => (await readAgentLedger(agentId)).shards.find((x) => x.balances.USD > 0)?.shard as number;

  it('a refund whose read caught the charge before a concurrent full refund and the shards after: 400 exceeds refundable, not 402', async () => {
    const user = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const charged = await create(agent.key, user.key, { amount: 10 });
    let full: Awaited<ReturnType<typeof act>> | undefined;
    // A BatchGetItem reads its items one by one: the charge before the other refund, the shards after it.
    const between = afterCommand({
      command: 'BatchGetItemCommand',
      match: (input) => inputText(input).includes(charged.body.id),
      between: async () => {
        full = await act(agent.key, charged.body.id, 'refund');
      },
      answer: async (before, input) => {
        const after = itemsOf(await readAgain(input));
        return withItems(before, [
          ...itemsOf(before).filter((i) => String(i.PK).startsWith('CHARGES#')),
          ...after.filter((i) => !String(i.PK).startsWith('CHARGES#')),
        ]);
      },
    });
    const late = await act(agent.key, charged.body.id, 'refund', { amount: 1 }).finally(() => between.remove());
    expect(between.fired()).toBe(true);
    expect([full?.status, full?.body.refundedAmount]).toEqual([200, 10]);
    expect([late.status, late.body]).toEqual([400, { error: 'amount exceeds refundable amount' }]);
    expect([await balances(user.id), await earned(agent.key)]).toEqual([10, 0]);
  });

  it('a refund the shards cover together, read while money moved from one shard to another: 200, not 402', async () => {
    const user = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const charged = await create(agent.key, user.key, { amount: 10 });
    const from = await shardHolding(agent.id);
    const to = (from + 1) % config().BALANCE_SHARDS;
    // The read sees `to` before the move and `from` after it: 0 in all, though the agent held 10.00 throughout.
    const between = afterCommand({
      command: 'BatchGetItemCommand',
      match: (input) => inputText(input).includes(charged.body.id),
      between: () =>
        rebalance(
          agent.id,
          Array.from({ length: config().BALANCE_SHARDS }, (_, i) => (i === to ? 1000 : 0)),
        ),
      answer: async (before, input) => {
        const after = itemsOf(await readAgain(input));
        return withItems(before, [
          ...after.filter((i) => i.PK !== shardPk(agent.id, to)),
          ...itemsOf(before).filter((i) => i.PK === shardPk(agent.id, to)),
        ]);
      },
    });
    const refund = await act(agent.key, charged.body.id, 'refund', { amount: 8 }).finally(() => between.remove());
    expect(between.fired()).toBe(true);
    expect([refund.status, refund.body.refundedAmount]).toEqual([200, 8]);
    expect([await balances(user.id), await earned(agent.key)]).toEqual([8, 2]);
  });

  it('twenty 1.00 refunds of a 10.00 charge, the agent holding 10.37 across its shards: ten 200s and ten 400s, never 402', async () => {
    for (let round = 0; round < 3; round++) {
      const user = await t.fundedUser({ USD: 10.37 });
      const agent = await t.enabledAgent();
      const charged = await create(agent.key, user.key, { amount: 10 });
      expect((await create(agent.key, user.key, { amount: 0.37 })).status).toBe(201);
      await rebalance(agent.id, [300, 250, 200, 150, 100, 37, 0, 0].slice(0, config().BALANCE_SHARDS));
      const results = await Promise.all(Array.from({ length: 20 }, () => act(agent.key, charged.body.id, 'refund', { amount: 1 })));
      const tally = (status: number) => results.filter((r) => r.status === status).length;
      expect({ round, ok: tally(200), exceeds: tally(400), other: results.length - tally(200) - tally(400) }).toEqual({
        round,
        ok: 10,
        exceeds: 10,
        other: 0,
      });
      for (const r of results.filter((x) => x.status === 400)) expect(r.body).toEqual({ error: 'amount exceeds refundable amount' });
      expect([await balances(user.id), await earned(agent.key)]).toEqual([10, 0.37]);
    }
  });

  it('two full refunds of one charge racing: one 200, the other 400 amount exceeds refundable amount, never 402', async () => {
    for (let round = 0; round < 25; round++) {
      const user = await t.fundedUser({ USD: 3 });
      const agent = await t.enabledAgent();
      const charged = await create(agent.key, user.key, { amount: 3 });
      const [a, b] = await Promise.all([act(agent.key, charged.body.id, 'refund'), act(agent.key, charged.body.id, 'refund')]);
      const statuses = [a.status, b.status].sort();
      expect({ round, statuses }).toEqual({ round, statuses: [200, 400] });
      expect([a, b].find((r) => r.status === 400)?.body).toEqual({ error: 'amount exceeds refundable amount' });
      expect([await balances(user.id), await earned(agent.key)]).toEqual([3, 0]);
    }
  });
});

it('20 concurrent partial refunds that together exceed the charge: the refunded sum never passes it', async () => {
  const user = await t.fundedUser({ USD: 10 });
  const agent = await t.enabledAgent();
  const charged = await create(agent.key, user.key, { amount: 10 });
  const results = await Promise.all(Array.from({ length: 20 }, () => act(agent.key, charged.body.id, 'refund', { amount: 0.75 })));
  const ok = results.filter((r) => r.status === 200);
  // 13 × 0.75 = 9.75 fits; a 14th would be 10.50.
  expect(ok).toHaveLength(13);
  for (const r of results.filter((r) => r.status !== 200))
    expect([r.status, r.body]).toEqual([400, { error: 'amount exceeds refundable amount' }]);
  // Each answer states the cumulative total right after it: 0.75, 1.50, …, 9.75, once each.
  expect(ok.map((r) => r.body.refundedAmount).sort((a, b) => a - b)).toEqual(Array.from({ length: 13 }, (_, i) => (i + 1) * 0.75));
  expect(await balances(user.id)).toBe(9.75);
  expect(await earned(agent.key)).toBe(0.25);
  const rest = await act(agent.key, charged.body.id, 'refund');
  expect(rest.body).toMatchObject({ refundedAmount: 10 });
  expect(await earned(agent.key)).toBe(0);
});

it('refund vs withdrawal of the same earned money: one of them gets it, the balance never goes negative', async () => {
  for (let round = 0; round < 5; round++) {
    const user = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const charged = await create(agent.key, user.key, { amount: 10 });
    const [refund, withdrawal] = await Promise.all([act(agent.key, charged.body.id, 'refund'), withdraw(agent.key, 10)]);
    expect([refund.status === 200, withdrawal.status === 200].filter(Boolean)).toHaveLength(1);
    if (refund.status !== 200) expect([refund.status, refund.body]).toEqual([402, { error: 'insufficient balance' }]);
    if (withdrawal.status !== 200) expect([withdrawal.status, withdrawal.body]).toEqual([400, { error: 'insufficient balance' }]);
    expect(await earned(agent.key)).toBe(0);
    expect(await balances(user.id)).toBe(refund.status === 200 ? 10 : 0);
  }
});

it('rotate vs charge: no charge with the old key succeeds once the rotation has answered; the rest moved money exactly once', async () => {
  const user = await t.fundedUser({ USD: 100 });
  const agent = await t.enabledAgent();
  const before = Array.from({ length: 20 }, () => create(agent.key, user.key, { amount: 1 }));
  const rotation = t.call<{ apiKey: string }>('POST', '/api/v1/agents/keys/rotate', { headers: { 'x-agent-key': agent.key } });
  const results = await Promise.all(before);
  const rotated = await rotation;
  expect(rotated.status).toBe(200);
  const after = await Promise.all(Array.from({ length: 5 }, () => create(agent.key, user.key, { amount: 1 })));
  for (const r of [...results, ...after]) expect([201, 401]).toContain(r.status);
  for (const r of after) expect([r.status, r.body]).toEqual([401, { error: 'invalid or disabled agent key' }]);
  const succeeded = results.filter((r) => r.status === 201).length;
  expect(await balances(user.id)).toBe(100 - succeeded);
  expect(await earned(rotated.body.apiKey)).toBe(succeeded);
});

describe('faults on capture and refund', () => {
  const attempts = () => config().TRANSACTION_MAX_ATTEMPTS;
  type Input = { TransactItems?: { Update?: { UpdateExpression?: string }; Delete?: { Key?: { PK?: string } } }[] };
  const isCapture = (input: Record<string, unknown>) =>
    ((input as Input).TransactItems ?? []).some((i) => /amount = :captured/.test(i.Update?.UpdateExpression ?? ''));
  const isRefund = (input: Record<string, unknown>) =>
    ((input as Input).TransactItems ?? []).some((i) => /refundedAmount/.test(i.Update?.UpdateExpression ?? ''));

  /** The transaction commits, then its answer is lost on the way back (the Lambda died, the network broke). */
  function loseAnswer(match: (input: Record<string, unknown>) => boolean) {
    const name = `lose-answer-${++n}`;
    let hits = 0;
    db().middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === 'TransactWriteItemsCommand' && hits === 0 && match(args.input as Record<string, unknown>)) {
          hits += 1;
          throw new Error('injected: the answer was lost after the commit');
        }
        return out;
      },
      { step: 'initialize', name },
    );
    return { hits: () => hits, remove: () => void db().middlewareStack.remove(name) };
  }

  it('capture: conflicts on every attempt but the last commit once; past every retry nothing moves and a retry succeeds', async () => {
    const user = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const first = await create(agent.key, user.key, { amount: 2, capture: false });
    let fault = inject({ command: 'TransactWriteItemsCommand', match: isCapture, times: attempts() - 1, error: transactionConflict });
    try {
      expect((await act(agent.key, first.body.id, 'capture', { amount: 1 })).body).toMatchObject({ status: 'SUCCESS', amount: 1 });
    } finally {
      fault.remove();
    }
    const second = await create(agent.key, user.key, { amount: 2, capture: false });
    const idem = key();
    fault = inject({ command: 'TransactWriteItemsCommand', match: isCapture, times: attempts(), error: transactionConflict });
    try {
      const res = await act(agent.key, second.body.id, 'capture', undefined, idem);
      expect([res.status, res.body]).toEqual([409, { error: 'request with this Idempotency-Key is in progress' }]);
    } finally {
      fault.remove();
    }
    expect(await held(user.key)).toBe(2);
    expect((await act(agent.key, second.body.id, 'capture', undefined, idem)).body).toMatchObject({ status: 'SUCCESS', amount: 2 });
    expect(await balances(user.id)).toBe(7);
    expect(await earned(agent.key)).toBe(3);
  });

  it('capture and refund whose answer was lost after the commit: the retry with the same key replays it, money moved once', async () => {
    const user = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const hold = await create(agent.key, user.key, { amount: 5, capture: false });
    const captureKey = key();
    let lost = loseAnswer(isCapture);
    try {
      // Called in-process: over HTTP the lost answer is a 500, which the contract check refuses to accept.
      await expect(
        captureCharge({
          agent: { id: agent.id, keyHash: hashKey(agent.key) },
          chargeId: hold.body.id,
          idempotencyKey: captureKey,
          amount: '4',
          // The stage's public address, as the route gives it: the stored answer's links are what a replay over HTTP sends.
          baseUrl: t.stack.url,
        }),
      ).rejects.toThrow('answer was lost');
    } finally {
      lost.remove();
    }
    expect(lost.hits()).toBe(1);
    const replay = await act(agent.key, hold.body.id, 'capture', { amount: 4 }, captureKey);
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.body.amount]).toEqual([200, 'true', 4]);

    const refundKey = key();
    lost = loseAnswer(isRefund);
    try {
      await expect(
        refundCharge({
          agent: { id: agent.id, keyHash: hashKey(agent.key) },
          chargeId: hold.body.id,
          idempotencyKey: refundKey,
          amount: '1.5',
          // The stage's public address, as the route gives it: the stored answer's links are what a replay over HTTP sends.
          baseUrl: t.stack.url,
        }),
      ).rejects.toThrow('answer was lost');
    } finally {
      lost.remove();
    }
    const again = await act(agent.key, hold.body.id, 'refund', { amount: 1.5 }, refundKey);
    expect([again.status, again.headers.get('idempotent-replayed'), again.body.refundedAmount]).toEqual([200, 'true', 1.5]);
    expect(await balances(user.id)).toBe(10 - 4 + 1.5);
    expect(await earned(agent.key)).toBe(2.5);
  });

  it('refund: conflicts past every retry answer 409 and move nothing', async () => {
    const user = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const charged = await create(agent.key, user.key, { amount: 3 });
    const fault = inject({ command: 'TransactWriteItemsCommand', match: isRefund, times: attempts(), error: transactionConflict });
    try {
      const res = await act(agent.key, charged.body.id, 'refund');
      expect([res.status, res.body]).toEqual([409, { error: 'request with this Idempotency-Key is in progress' }]);
    } finally {
      fault.remove();
    }
    expect(await balances(user.id)).toBe(7);
    expect(await earned(agent.key)).toBe(3);
  });
});
