/**
 * The top-up watcher's work list over its sharded index partitions (DESIGN §18): PENDING top-ups in
 * every partition, and in the legacy one (entries written before the sharding), are all watched,
 * soonest expiry first, at most the run's bound.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import { EXPIRY_SHARDS, INDEX_PARTITIONS, keys } from '../../functions/store/table';
import { listPendingTopups } from '../../functions/store/topup.repository';
import { createWatcher } from '../../functions/use-cases/topup-watch';
import { auditAfterAll } from '../support/audit';
import { startTestStack, type TestStack } from '../support/stack';
import { createTestTable } from '../support/table';
import { getTopup, openTopup, type TopupBody } from './support';

let t: TestStack;
beforeAll(async () => {
  await createTestTable();
  t = await startTestStack();
});
afterAll(async () => t.stack.stop());
auditAfterAll();

it('watches PENDING top-ups from every shard of the list and its legacy partition, soonest first, bounded per run', async () => {
  const opened: { userKey: string; userId: string; topup: TopupBody }[] = [];
  // Five payers, four top-ups each (a payer may have ten open).
  for (let u = 0; u < 5; u++) {
    const user = await t.fundedUser();
    for (let i = 0; i < 4; i++) {
      const res = await openTopup(t, user.key, `{"currency":"USD","amount":${u + 1}.0${i}}`);
      expect(res.status).toBe(201);
      opened.push({ userKey: user.key, userId: user.id, topup: res.body });
    }
  }
  const partitions = new Set(opened.map(({ topup }) => keys.pendingTopupIndex(topup.expiresAt, topup.id).GSI1PK));
  expect(partitions.size).toBeGreaterThanOrEqual(EXPIRY_SHARDS / 2);

  // One as written before the sharding: in the one partition of the list.
  const legacy = opened[9] as (typeof opened)[number];
  await db().send(
    new UpdateCommand({
      TableName: config().TABLE_NAME,
      Key: keys.topup(legacy.userId, legacy.topup.id),
      UpdateExpression: 'SET GSI1PK = :legacy',
      ExpressionAttributeValues: { ':legacy': INDEX_PARTITIONS.pendingTopups.legacy },
    }),
  );

  const soonest = opened
    .map(({ topup }) => `${topup.expiresAt}#${topup.id}`)
    .sort()
    .slice(0, 6);
  expect((await listPendingTopups(6)).map((p) => `${p.expiresAt}#${p.id}`)).toEqual(soonest);
  expect((await listPendingTopups(100)).map((p) => p.id).sort()).toEqual(opened.map(({ topup }) => topup.id).sort());

  // Never approved at PayPal: past their window, one run expires them all, the legacy one too.
  const report = await createWatcher({ now: () => new Date(Date.now() + 4 * 3600_000) })();
  expect(report).toMatchObject({ pending: opened.length, expired: opened.length, errors: 0 });
  for (const { userKey, topup } of opened) expect((await getTopup(t, userKey, topup.id)).body.status).toBe('EXPIRED');
  expect(await listPendingTopups(100)).toEqual([]);
});
