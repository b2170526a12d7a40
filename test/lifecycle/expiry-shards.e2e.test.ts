/**
 * The sweeper's queue over its sharded index partitions (DESIGN §18): due holds in every
 * partition, and in the legacy one (markers written before the sharding), are all expired, the
 * oldest due first, at most the run's bound.
 */
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { listDuePending } from '../../functions/store/charges/charge-pending.repository';
import { db } from '../../functions/store/client';
import { EXPIRY_SHARDS, INDEX_PARTITIONS, keys } from '../../functions/store/table';
import { expireDueCharges } from '../../functions/use-cases/charges/expiry';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack({}, { sweepIntervalMs: 0 });
auditAfterAll();

type Charge = { id: string; status: string; expiresAt: string | null };
type Me = { balances: { USD: number }; held: { USD: number } };

const table = () => config().TABLE_NAME;
const get = async (key: Record<string, string>) =>
  (await db().send(new GetCommand({ TableName: table(), Key: key, ConsistentRead: true }))).Item;

it('expires due holds from every shard of the queue and its legacy partition, oldest first, bounded per run', async () => {
  const agent = await t.enabledAgent();
  const user = await t.fundedUser({ USD: 100 });
  const holds: Charge[] = [];
  for (let i = 0; i < 40; i += 8) {
    holds.push(
      ...(await Promise.all(
        Array.from({ length: 8 }, async (_, j) => {
          const res = await t.call<Charge>('POST', '/api/v1/agents/charges', {
            headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `h-${i + j}` },
            body: { amount: 1, currency: 'USD', capture: false },
          });
          if (res.status !== 201) throw new Error(`hold: ${res.status} ${res.text}`);
          return res.body;
        }),
      )),
    );
  }
  const markers = await Promise.all(holds.map((h) => get(keys.pendingCharge(h.id))));
  const partitions = new Set(markers.map((m) => String(m?.GSI1PK)));
  expect(partitions.size).toBeGreaterThanOrEqual(EXPIRY_SHARDS / 2);
  for (const pk of partitions) expect(keys.pendingExpiryPartitions()).toContain(pk);

  // One hold as written before the sharding: its charge in the agent's one partition, its marker
  // in the one expiry partition and without `chargeSharded`.
  const legacy = holds[17] as Charge;
  const item = await get(keys.charge(agent.id, legacy.id));
  await db().send(new PutCommand({ TableName: table(), Item: { ...item, ...keys.legacyCharge(agent.id, legacy.id) } }));
  await db().send(new DeleteCommand({ TableName: table(), Key: keys.charge(agent.id, legacy.id) }));
  await db().send(
    new UpdateCommand({
      TableName: table(),
      Key: keys.pendingCharge(legacy.id),
      UpdateExpression: 'SET GSI1PK = :legacy REMOVE chargeSharded',
      ExpressionAttributeValues: { ':legacy': INDEX_PARTITIONS.pendingExpiry.legacy },
    }),
  );

  const later = new Date(Date.now() + 30 * 86_400_000);
  // The bound: the 10 due first of them all, in order, whichever partition holds them.
  const soonest = holds
    .map((h) => `${h.expiresAt}#${h.id}`)
    .sort()
    .slice(0, 10);
  expect((await listDuePending(later, 10)).map((p) => `${p.expiresAt}#${p.chargeId}`)).toEqual(soonest);

  const report = await expireDueCharges(later);
  expect(report).toMatchObject({ due: 40, expired: 40, failed: 0 });
  for (const h of holds) {
    const stored = await get(h === legacy ? keys.legacyCharge(agent.id, h.id) : keys.charge(agent.id, h.id));
    expect([h.id, stored?.status]).toEqual([h.id, 'EXPIRED']);
  }
  expect(await get(keys.charge(agent.id, legacy.id))).toBeUndefined();
  const me = await t.call<Me>('GET', '/api/v1/users/me', { headers: { 'x-user-key': user.key } });
  expect(me.body).toMatchObject({ balances: { USD: 100 }, held: { USD: 0 } });
  expect(await listDuePending(later, 100)).toEqual([]);
});
