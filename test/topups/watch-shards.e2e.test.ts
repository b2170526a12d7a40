/**
 * The top-up watcher's work list over its sharded index partitions (DESIGN §18): PENDING top-ups in
 * every partition, and in the legacy one (entries written before the sharding), are all watched,
 * soonest expiry first, at most the run's bound. Every partition holds one, by construction.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import { EXPIRY_SHARDS, INDEX_PARTITIONS, keys } from '../../functions/store/table';
import { listPendingTopups } from '../../functions/store/topups/topup.repository';
import { createWatcher } from '../../functions/use-cases/topups/topup-watch';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { getTopup, openTopup, type TopupBody } from './support';

const t = useTestStack();
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
  // Where each one's list entry is, chosen rather than left to the ids' hashes (20 random ids
  // missed half of the 16 shards about once in 2,000 runs): the first 16 one to a shard, three more
  // doubling up, and the last as written before the sharding, in the list's one legacy partition.
  // Which partition an entry is in is all the watcher reads; the hash that picks it is
  // test/store/table-keys.test.ts's.
  const partitions = keys.pendingTopupPartitions();
  expect(partitions).toEqual([
    ...Array.from({ length: EXPIRY_SHARDS }, (_, s) => `PENDINGTOPUPS#${s}`),
    INDEX_PARTITIONS.pendingTopups.legacy,
  ]);
  const placed = opened.map((_, i) =>
    i === opened.length - 1 ? INDEX_PARTITIONS.pendingTopups.legacy : `PENDINGTOPUPS#${i % EXPIRY_SHARDS}`,
  );
  for (const [i, { userId, topup }] of opened.entries()) {
    await db().send(
      new UpdateCommand({
        TableName: config().TABLE_NAME,
        Key: keys.topup(userId, topup.id),
        UpdateExpression: 'SET GSI1PK = :partition',
        ExpressionAttributeValues: { ':partition': placed[i] },
      }),
    );
  }
  expect(new Set(placed)).toEqual(new Set(partitions));

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
