/**
 * The sharded keys (DESIGN §18): a charge's partition, and its expiry-queue and top-up-list
 * partitions, follow from the id alone, and 1,000 time-ordered ids of one agent spread with no
 * partition above 10% of them (the bench's `partitions written by 1000 charges of one agent`).
 */
import { newChargeId, newTopupId } from '../../functions/core/ids';
import { CHARGE_SHARDS, EXPIRY_SHARDS, keys, shardOf } from '../../functions/store/table';

const spread = (pks: string[]) => {
  const counts = new Map<string, number>();
  for (const pk of pks) counts.set(pk, (counts.get(pk) ?? 0) + 1);
  return { partitions: counts.size, largest: Math.max(...counts.values()) / pks.length };
};

describe('sharded keys', () => {
  it('puts 1,000 charges of one agent (ids made in one burst) in every one of its 32 shards, none over 10%', () => {
    const ids = Array.from({ length: 1000 }, () => newChargeId('a01jhx3k6v1f8q2n7c9m4p5r6s7'));
    const { partitions, largest } = spread(ids.map((id) => keys.charge('a1', id).PK));
    expect(CHARGE_SHARDS).toBe(32);
    expect(partitions).toBe(CHARGE_SHARDS);
    // Expected about 3.1% each; 10% would be more than 9 standard deviations out.
    expect(largest).toBeLessThan(0.1);
  });

  it("spreads holds' expiry entries and pending top-ups over their 16 partitions, none over 10%", () => {
    const holds = spread(
      Array.from(
        { length: 1000 },
        () => keys.pendingExpiryIndex('2030-01-01T00:00:00.000Z', newChargeId('a01jhx3k6v1f8q2n7c9m4p5r6s7')).GSI1PK,
      ),
    );
    const topups = spread(Array.from({ length: 1000 }, () => keys.pendingTopupIndex('2030-01-01T00:00:00.000Z', newTopupId()).GSI1PK));
    for (const s of [holds, topups]) {
      expect(s.partitions).toBe(EXPIRY_SHARDS);
      expect(s.largest).toBeLessThan(0.1);
    }
  });

  it('derives every key from the id alone, the same each time, among the partitions listings and queues read', () => {
    const id = 'c01jabcdefghjkmnpqrstvwxyz0';
    expect(keys.charge('a1', id)).toEqual({ PK: `CHARGES#a1#${shardOf(id, CHARGE_SHARDS)}`, SK: id });
    expect(keys.chargePartitions('a1')).toContain(keys.charge('a1', id).PK);
    expect(keys.chargePartitions('a1')).toContain(keys.legacyCharge('a1', id).PK);
    expect(keys.legacyCharge('a1', id)).toEqual({ PK: 'CHARGES#a1', SK: id });
    expect(keys.pendingExpiryPartitions()).toContain(keys.pendingExpiryIndex('t', id).GSI1PK);
    expect(keys.pendingExpiryPartitions()).toContain('PENDING_EXPIRY');
    expect(keys.pendingTopupPartitions()).toContain(keys.pendingTopupIndex('t', 't01').GSI1PK);
    expect(keys.pendingTopupPartitions()).toContain('PENDINGTOPUPS');
    expect(new Set(keys.chargePartitions('a1')).size).toBe(CHARGE_SHARDS + 1);
  });
});
