/**
 * Each invariant of the ledger audit on its own: a balanced row set passes every check, and one
 * change that breaks the invariant makes exactly that check name the difference.
 */
import {
  agentMismatches,
  describeHeldMismatch,
  heldMismatches,
  negativeBalanceProblems,
  owedProblems,
  userMismatches,
} from '../../functions/audit/balance-checks';
import { grantProblems, lifecycleProblems } from '../../functions/audit/charge-checks';
import { currencyProblems, currencyTotals, type Rows } from '../../functions/audit/ledger-checks';
import { feeBasisProblems, payoutLockProblems, payoutSplitProblems } from '../../functions/audit/payout-checks';
import type { ShardRow, UserRow } from '../../functions/store/audit/ledger-rows.balances';
import type { ChargeRow, GrantRow } from '../../functions/store/audit/ledger-rows.charges';
import type { PayoutRow } from '../../functions/store/audit/ledger-rows.payouts';

const user = (balances: UserRow['balances'], held: UserRow['held'] = { USD: 100 }): UserRow => ({
  kind: 'user',
  userId: 'u1',
  balances,
  held,
});
const shard = (balances: ShardRow['balances']): ShardRow => ({ kind: 'shard', agentId: 'a1', key: 'AGENTBAL#a1#0', balances });
const charge = (chargeId: string, status: ChargeRow['status'], amount: number): ChargeRow => ({
  kind: 'charge',
  chargeId,
  agentId: 'a1',
  userId: 'u1',
  status,
  currency: 'USD',
  amount,
  refundedAmount: 0,
});
const payout = (payoutId: string, status: PayoutRow['status'], amount: number, fee: number, netAmount: number): PayoutRow => ({
  kind: 'payout',
  payoutId,
  agentId: 'a1',
  status,
  currency: 'USD',
  amount,
  fee,
  accountCreationFee: 0,
  netAmount,
});
/** A USDC payout that paid for its destination's token account (ACCOUNT_CREATION_FEE). */
const creatingPayout = (
  payoutId: string,
  status: PayoutRow['status'],
  amount: number,
  fee: number,
  accountCreationFee: number,
  netAmount: number,
) => ({
  ...payout(payoutId, status, amount, fee, netAmount),
  currency: 'USDC' as const,
  accountCreationFee,
});

/**
 * 10 USD credited to u1; u1 paid a1 3 USD and has 1 USD held (a PENDING charge, and `heldUSD` on
 * its item); a1 was paid out 1 USD (fee 0.03)
 * and has 0.50 in flight (fee 0.02 half up), so 1.50 is left in its shard.
 */
function balanced(): Rows {
  return {
    credits: [{ kind: 'credit', userId: 'u1', creditId: 'c1', currency: 'USD', amount: 1000 }],
    users: [user({ USD: 600, USDC: 0 })],
    charges: [charge('ch1', 'SUCCESS', 300), charge('ch2', 'PENDING', 100), charge('ch3', 'FAILED', 5000)],
    shards: [shard({ USD: 150, USDC: 0 })],
    payouts: [payout('p1', 'COMPLETED', 100, 3, 97), payout('p2', 'PENDING', 50, 2, 48), payout('p3', 'FAILED', 70, 2, 68)],
    locks: [{ kind: 'lock', agentId: 'a1', currency: 'USD', payoutId: 'p2' }],
  };
}

describe('ledger checks on a balanced row set', () => {
  it('accounts for every credited cent and finds nothing to report', () => {
    const rows = balanced();
    const totals = currencyTotals(rows);
    expect(totals.USD).toEqual({
      credited: 1000,
      userBalances: 600,
      agentBalances: 150,
      held: 100,
      payoutsPaidNet: 97,
      platformFees: 3,
      inFlightGross: 50,
      reversed: 0,
      accountedFor: 1000,
      difference: 0,
    });
    expect(currencyProblems(totals)).toEqual([]);
    expect(agentMismatches(rows)).toEqual([]);
    expect(userMismatches(rows)).toEqual([]);
    expect(heldMismatches(rows)).toEqual([]);
    expect(negativeBalanceProblems(rows)).toEqual([]);
    expect(payoutSplitProblems(rows.payouts)).toEqual([]);
    expect(payoutLockProblems(rows.payouts, rows.locks)).toEqual([]);
  });
});

describe('each check fails on the row set that breaks it', () => {
  it('per-currency total: money that appears in a user balance is a named difference in that currency only', () => {
    const rows = { ...balanced(), users: [user({ USD: 601, USDC: 0 })] };
    const totals = currencyTotals(rows);
    expect([totals.USD.difference, totals.USDC.difference]).toEqual([-1, 0]);
    expect(currencyProblems(totals)).toEqual([
      'USD: credited 10 but accounted for 10.01 — difference -0.01 USD (users 6.01, agents 1.5, held 1, paid net 0.97, fees 0.03, in flight 0.5)',
    ]);
  });

  it('per-currency total: a FAILED payout that was never refunded is missing money', () => {
    const rows = { ...balanced(), shards: [shard({ USD: 80, USDC: 0 })] };
    expect(currencyTotals(rows).USD.difference).toBe(70);
  });

  it('per agent: a shard that lost money names the agent, the currency and the difference', () => {
    const rows = { ...balanced(), shards: [shard({ USD: 149, USDC: 0 })] };
    expect(agentMismatches(rows)).toEqual([
      { agentId: 'a1', currency: 'USD', successCharges: 300, shardBalance: 149, payoutsGross: 150, difference: 1 },
    ]);
  });

  it('per agent: a charge flipped to SUCCESS without earnings is caught even though the totals balance', () => {
    const rows = { ...balanced(), charges: [...balanced().charges.slice(0, 2), charge('ch3', 'SUCCESS', 5000)] };
    expect(agentMismatches(rows)).toEqual([expect.objectContaining({ agentId: 'a1', currency: 'USD', difference: 5000 })]);
    expect(userMismatches(rows)).toEqual([expect.objectContaining({ userId: 'u1', currency: 'USD', difference: -5000 })]);
  });

  it('per user: a balance that does not equal credits minus charges names the user', () => {
    const rows = {
      ...balanced(),
      credits: [...balanced().credits, { kind: 'credit' as const, userId: 'u1', creditId: 'c2', currency: 'USDC' as const, amount: 7 }],
    };
    expect(userMismatches(rows)).toEqual([{ userId: 'u1', currency: 'USDC', credited: 7, charged: 0, balance: 0, difference: 7 }]);
  });

  it('held money is counted once: from the PENDING charges, never again from the user items', () => {
    // Twice the held amount on the item would be 11 accounted for; the total stays 10 and the
    // per-user held check names the item instead.
    const rows = { ...balanced(), users: [user({ USD: 600, USDC: 0 }, { USD: 200 })] };
    expect(currencyTotals(rows).USD).toMatchObject({ held: 100, accountedFor: 1000, difference: 0 });
    expect(heldMismatches(rows)).toEqual([{ userId: 'u1', currency: 'USD', heldOnItem: 200, pendingCharges: 100, difference: 100 }]);
  });

  it('per user held: held on the item that no PENDING charge explains names the user, the currency and the difference', () => {
    const rows = { ...balanced(), users: [user({ USD: 600, USDC: 0 }, { USD: 100, USDC: 5 })] };
    const mismatches = heldMismatches(rows);
    expect(mismatches).toEqual([{ userId: 'u1', currency: 'USDC', heldOnItem: 5, pendingCharges: 0, difference: 5 }]);
    expect(mismatches.map(describeHeldMismatch)).toEqual([
      'user u1 USDC: held 0.000005 on the user item ≠ PENDING charges 0 — difference 0.000005',
    ]);
  });

  it('per user held: a PENDING charge whose hold is missing from the item (settled without moving the hold back)', () => {
    const rows = { ...balanced(), users: [user({ USD: 600, USDC: 0 }, {})] };
    expect(heldMismatches(rows)).toEqual([{ userId: 'u1', currency: 'USD', heldOnItem: 0, pendingCharges: 100, difference: -100 }]);
    // The total counts the charge, so it balances: only the per-user check sees this break.
    expect(currencyTotals(rows).USD.difference).toBe(0);
  });

  it('per user held: a PENDING charge flipped to EXPIRED without returning the hold breaks held, balance and total', () => {
    const rows = { ...balanced(), charges: [charge('ch1', 'SUCCESS', 300), charge('ch2', 'EXPIRED', 100), charge('ch3', 'FAILED', 5000)] };
    expect(heldMismatches(rows)).toEqual([{ userId: 'u1', currency: 'USD', heldOnItem: 100, pendingCharges: 0, difference: 100 }]);
    expect(userMismatches(rows)).toEqual([{ userId: 'u1', currency: 'USD', credited: 1000, charged: 300, balance: 600, difference: 100 }]);
    expect(currencyTotals(rows).USD.difference).toBe(100);
  });

  it('per user held: a PENDING charge of a user with no item is named too', () => {
    const orphan = { ...charge('ch9', 'PENDING', 7), userId: 'u9' };
    const rows = { ...balanced(), charges: [...balanced().charges, orphan] };
    expect(heldMismatches(rows)).toEqual([{ userId: 'u9', currency: 'USD', heldOnItem: 0, pendingCharges: 7, difference: -7 }]);
  });

  it('per user: an approval that paid the agent but left the charge PENDING shows in balance and agent checks', () => {
    // Approve moves held → agent shard and the charge to SUCCESS; here only the money moved.
    const rows = { ...balanced(), users: [user({ USD: 600, USDC: 0 }, {})], shards: [shard({ USD: 250, USDC: 0 })] };
    expect(heldMismatches(rows)).toEqual([expect.objectContaining({ userId: 'u1', difference: -100 })]);
    expect(agentMismatches(rows)).toEqual([expect.objectContaining({ agentId: 'a1', difference: -100 })]);
    expect(currencyTotals(rows).USD.difference).toBe(-100);
  });

  it('no negative balance: names the user, or the agent and the exact shard item', () => {
    const rows = { ...balanced(), users: [user({ USD: 600, USDC: -1 }, { USD: 100, USDC: -3 })], shards: [shard({ USD: -2 })] };
    expect(negativeBalanceProblems(rows)).toEqual([
      'user u1: USDC balance is negative (-1)',
      'user u1: USDC held is negative (-3)',
      'agent a1 shard AGENTBAL#a1#0: USD balance is negative (-2)',
    ]);
  });

  it('fee on each payout: a split that is not 3% half up names the payout and both splits', () => {
    expect(payoutSplitProblems([payout('p9', 'COMPLETED', 1001, 31, 970)])).toEqual([
      'payout p9: gross 10.01 USD should split into fee 0.3 + net 9.71, found fee 0.31 + net 9.7',
    ]);
  });

  it('fee basis: five counted payouts of 1.16 carry 0.17 in all, 3% of 5.80; a FAILED one gave its share back', () => {
    const counted = (id: string, status: PayoutRow['status'], fee: number) => ({
      ...payout(id, status, 116, fee, 116 - fee),
      feeCounted: true,
    });
    // 3, 4, 3, 4, 3 cents: the running totals round(3.48)=3, round(6.96)=7, 10, 14, 17.
    const payouts = [counted('p1', 'COMPLETED', 3), counted('p2', 'COMPLETED', 4), counted('p3', 'COMPLETED', 3)];
    payouts.push(counted('p4', 'COMPLETED', 4), counted('p5', 'COMPLETED', 3), counted('p6', 'FAILED', 4));
    const basis = { kind: 'feeBasis' as const, agentId: 'a1', currency: 'USD' as const, withdrawn: 580, feesPaid: 17 };
    expect(payoutSplitProblems(payouts)).toEqual([]);
    expect(feeBasisProblems(payouts, [basis])).toEqual([]);
    // The per-withdrawal rounding of old: five payouts of 3 cents undercut 3% of the whole.
    const split = payouts.slice(0, 5).map((p) => ({ ...p, fee: 3, netAmount: 113 }));
    expect(feeBasisProblems(split, [{ ...basis, feesPaid: 15 }])).toEqual([
      'agent a1 USD: fees 0.15 on 5.8 withdrawn, where 3% of it (half up) is 0.17',
    ]);
    expect(feeBasisProblems(payouts, [{ ...basis, withdrawn: 696 }])).toEqual([
      'agent a1 USD: fee basis says 6.96 withdrawn and 0.17 in fees, its payouts that were not refunded 5.8 and 0.17',
      'agent a1 USD: fees 0.17 on 6.96 withdrawn, where 3% of it (half up) is 0.21',
    ]);
    expect(feeBasisProblems(payouts, [])).toEqual(['agent a1 USD: payouts counted 580 withdrawn without a fee basis']);
    // A counted fee is within a minor unit of 3% of its own gross, and still leaves a positive net.
    expect(payoutSplitProblems([counted('p7', 'COMPLETED', 5)])).toEqual([
      'payout p7: gross 1.16 USD carries fee 0.05 (3% of it alone is 0.03) and net 1.11, which should be 1.11 and above zero',
    ]);
  });

  it('payout split: the account-creation fee comes off the net, and only a USDC payout above zero net may carry one', () => {
    // 1 USDC to a fresh wallet: 0.03 fee + 0.50 creation fee + 0.47 net.
    expect(payoutSplitProblems([creatingPayout('p1', 'COMPLETED', 1_000_000, 30_000, 500_000, 470_000)])).toEqual([]);
    expect(payoutSplitProblems([creatingPayout('p2', 'COMPLETED', 1_000_000, 30_000, 500_000, 970_000)])).toEqual([
      'payout p2: gross 1 USDC should split into fee 0.03 + account creation 0.5 + net 0.47, found fee 0.03 + net 0.97',
    ]);
    expect(payoutSplitProblems([creatingPayout('p3', 'PENDING', 1_000_000, 30_000, 970_000, 0)])).toEqual([
      'payout p3: gross 1 USDC should split into fee 0.03 + account creation 0.97 + net 0 (not above zero: never payable), found fee 0.03 + net 0',
    ]);
    expect(payoutSplitProblems([{ ...payout('p4', 'COMPLETED', 1001, 30, 921), accountCreationFee: 50 }])).toEqual([
      'payout p4: a USD payout carries an account-creation fee of 0.5',
    ]);
  });

  it('per-currency total: the account-creation fee of a COMPLETED payout is platform revenue; a FAILED one was refunded with the gross', () => {
    // 5 USDC credited, 3 charged to a1; a1 withdrew 2 to a fresh wallet (0.06 + 0.50 fees, 1.44 paid),
    // and 1 more that FAILED and came back; 1 USDC is left in its shard.
    const rows: Rows = {
      credits: [{ kind: 'credit', userId: 'u1', creditId: 'c1', currency: 'USDC', amount: 5_000_000 }],
      users: [user({ USD: 0, USDC: 2_000_000 }, {})],
      charges: [{ ...charge('ch1', 'SUCCESS', 3_000_000), currency: 'USDC' }],
      shards: [shard({ USD: 0, USDC: 1_000_000 })],
      payouts: [
        creatingPayout('p1', 'COMPLETED', 2_000_000, 60_000, 500_000, 1_440_000),
        creatingPayout('p2', 'FAILED', 1_000_000, 30_000, 500_000, 470_000),
      ],
      locks: [],
    };
    expect(currencyTotals(rows).USDC).toMatchObject({ payoutsPaidNet: 1_440_000, platformFees: 560_000, difference: 0 });
    expect(agentMismatches(rows)).toEqual([]);
    expect(payoutSplitProblems(rows.payouts)).toEqual([]);
  });

  it('lock state: two payouts in flight for one agent', () => {
    const payouts = [payout('p1', 'PENDING', 100, 3, 97), payout('p2', 'PROCESSING', 100, 3, 97)];
    expect(payoutLockProblems(payouts, [{ kind: 'lock', agentId: 'a1', currency: 'USD', payoutId: 'p1' }])).toEqual([
      'agent a1 USD: 2 payouts in flight at once (p1, p2)',
    ]);
  });

  it('lock state: one payout in flight per currency is allowed, each under its own lock', () => {
    const payouts = [payout('p1', 'PENDING', 100, 3, 97), { ...payout('p2', 'PROCESSING', 100, 3, 97), currency: 'USDC' as const }];
    const locks = [
      { kind: 'lock' as const, agentId: 'a1', currency: 'USD', payoutId: 'p1' },
      { kind: 'lock' as const, agentId: 'a1', currency: 'USDC', payoutId: 'p2' },
    ];
    expect(payoutLockProblems(payouts, locks)).toEqual([]);
    expect(payoutLockProblems(payouts, locks.slice(0, 1))).toEqual(['agent a1 USDC: payout p2 in flight without the payout lock']);
  });

  it('lock state: a lock that outlived its payout blocks every withdrawal', () => {
    const payouts = [payout('p1', 'COMPLETED', 100, 3, 97)];
    expect(payoutLockProblems(payouts, [{ kind: 'lock', agentId: 'a1', currency: 'USD', payoutId: 'p1' }])).toEqual([
      'agent a1 USD: payout lock names p1, which is not in flight (a stuck lock blocks every withdrawal)',
    ]);
  });

  it('lock state: a payout in flight without the lock', () => {
    expect(payoutLockProblems([payout('p1', 'PROCESSING', 100, 3, 97)], [])).toEqual([
      'agent a1 USD: payout p1 in flight without the payout lock',
    ]);
  });
});

describe('the charge lifecycle in the audit', () => {
  it('counts a refund out of the agent and back to the user', () => {
    const refunded = { ...charge('c1', 'SUCCESS', 1000), refundedAmount: 400 };
    expect(agentMismatches({ shards: [shard({ USD: 600 })], charges: [refunded], payouts: [] })).toEqual([]);
    expect(
      userMismatches({
        users: [user({ USD: 9400 }, {})],
        credits: [{ kind: 'credit', userId: 'u1', creditId: 'x', currency: 'USD', amount: 10000 }],
        charges: [refunded],
      }),
    ).toEqual([]);
    // A refund the shard never paid shows as the agent holding too much.
    expect(agentMismatches({ shards: [shard({ USD: 1000 })], charges: [refunded], payouts: [] })[0]?.difference).toBe(-400);
  });

  it('names refunds past the amount, refunds of a charge that is not SUCCESS, and captures outside (0, authorized]', () => {
    const hold = (status: ChargeRow['status'], amount: number, authorizedAmount: number, refundedAmount = 0): ChargeRow => ({
      ...charge(`h-${status}-${amount}`, status, amount),
      authorizedAmount,
      refundedAmount,
    });
    expect(
      lifecycleProblems([hold('SUCCESS', 37, 100), hold('PENDING', 100, 100), hold('FAILED', 100, 100), hold('SUCCESS', 37, 100, 37)]),
    ).toEqual([]);
    expect(lifecycleProblems([{ ...charge('c1', 'SUCCESS', 100), refundedAmount: 101 }])).toEqual(['charge c1: refunded 1.01 USD of 1']);
    expect(lifecycleProblems([{ ...charge('c2', 'FAILED', 100), refundedAmount: 1 }])).toEqual(['charge c2: FAILED but refunded 0.01']);
    expect(lifecycleProblems([hold('SUCCESS', 101, 100)])).toEqual(['charge h-SUCCESS-101: captured 1.01 USD of an authorized 1']);
    expect(lifecycleProblems([hold('EXPIRED', 50, 100)])).toEqual(['charge h-EXPIRED-50: EXPIRED hold of 0.5 USD but authorized 1']);
    // The operator's refunds are a part of the charge's, never more.
    const refunded = { ...charge('c3', 'SUCCESS', 100), refundedAmount: 40 };
    expect(lifecycleProblems([{ ...refunded, operatorRefundedAmount: 40 }])).toEqual([]);
    expect(lifecycleProblems([{ ...refunded, operatorRefundedAmount: 41 }])).toEqual([
      'charge c3: the operator refunded 0.41 USD but its refunds total 0.4',
    ]);
  });
});

describe('reversed top-ups and what is owed (docs/topups.md)', () => {
  /**
   * u2 was credited 10 USD by a top-up and spent 7; PayPal took the 10 back: 3 debited, 7 owed.
   * A second top-up of 5 paid 5 of the debt (owedRepaid), so 2 are still owed and the balance is 0.
   */
  const reversedRows = (owedOnItem = 200): Rows => ({
    credits: [
      { kind: 'credit', userId: 'u2', creditId: 'c1', currency: 'USD', amount: 1000 },
      { kind: 'credit', userId: 'u2', creditId: 'c2', currency: 'USD', amount: 500, owedRepaid: 500 },
    ],
    users: [{ kind: 'user', userId: 'u2', balances: { USD: 0, USDC: 0 }, held: {}, owed: { USD: owedOnItem } }],
    charges: [{ ...charge('ch1', 'SUCCESS', 700), userId: 'u2' }],
    shards: [shard({ USD: 700 })],
    payouts: [],
    locks: [],
    reversals: [{ kind: 'reversal', userId: 'u2', reversalId: 'r1', currency: 'USD', amount: 1000, debited: 300, owed: 700 }],
  });

  it('counts what reversals took back as money out, per currency and per user, and ties the debt to the records', () => {
    const rows = reversedRows();
    const totals = currencyTotals(rows);
    expect(totals.USD).toMatchObject({ credited: 1500, userBalances: 0, agentBalances: 700, reversed: 800, difference: 0 });
    expect(currencyProblems(totals)).toEqual([]);
    expect(userMismatches(rows)).toEqual([]);
    expect(owedProblems(rows)).toEqual([]);
  });

  it('names a debt on the user item that the records do not explain, and a reversal that does not add up', () => {
    expect(owedProblems(reversedRows(100))).toEqual(['user u2 USD: owes 1 on the user item ≠ reversals less repayments 2']);
    const rows = reversedRows();
    const split = {
      ...rows,
      reversals: [
        { kind: 'reversal' as const, userId: 'u2', reversalId: 'r1', currency: 'USD' as const, amount: 1000, debited: 300, owed: 600 },
      ],
    };
    expect(owedProblems(split)).toEqual([
      'reversal r1 of 10 USD split into debited 3 + owed 6',
      'user u2 USD: owes 2 on the user item ≠ reversals less repayments 1',
    ]);
    // A reversal that debited more than its record says leaves the balance short: the user check names it.
    const debitedMore = {
      ...rows,
      users: [{ kind: 'user' as const, userId: 'u2', balances: { USD: -100 }, held: {}, owed: { USD: 200 } }],
    };
    expect(userMismatches(debitedMore)).toEqual([
      { userId: 'u2', currency: 'USD', credited: 1500, charged: 700, balance: -100, reversed: 800, difference: 100 },
    ]);
  });
});

describe('grants: spent against the charges made under them (docs/grants.md)', () => {
  const D = '2026-11-24';
  const M = '2026-11';
  const under = (chargeId: string, status: ChargeRow['status'], amount: number, day = D, extra: Partial<ChargeRow> = {}): ChargeRow => ({
    ...charge(chargeId, status, amount),
    grantId: 'g1',
    day,
    month: day.slice(0, 7),
    ...extra,
  });
  /**
   * g1 (a1's, from u1, USD): 3.00 captured today of a 5.00 hold, a 1.00 charge refunded in full
   * today, a 2.00 hold still open, a 1.50 charge of yesterday; a refused, a released and an expired
   * charge count nothing. spent 7.50, today 6.00, this month 7.50.
   */
  const grantRows = (g: Partial<GrantRow> = {}) => ({
    charges: [
      under('c1', 'SUCCESS', 300, D, { authorizedAmount: 500 }),
      under('c2', 'SUCCESS', 100, D, { refundedAmount: 100 }),
      under('c3', 'PENDING', 200),
      under('c4', 'SUCCESS', 150, '2026-11-23'),
      under('c5', 'FAILED', 900),
      under('c6', 'FAILED', 400, D, { authorizedAmount: 400 }),
      under('c7', 'EXPIRED', 250),
      charge('c8', 'SUCCESS', 5000),
    ],
    grants: [
      {
        kind: 'grant' as const,
        grantId: 'g1',
        userId: 'u1',
        agentId: 'a1',
        currency: 'USD' as const,
        spent: 750,
        spentDay: { p: D, v: 600 },
        spentMonth: { p: M, v: 750 },
        ...g,
      },
    ],
  });

  it('holds when spent is the SUCCESS charges (refunded ones in full) and open holds, per day and month too', () => {
    expect(grantProblems(grantRows())).toEqual([]);
    // A grant with no charge yet has no period counters and spends nothing.
    expect(
      grantProblems({
        charges: [],
        grants: [{ ...(grantRows().grants[0] as GrantRow), spent: 0, spentDay: undefined, spentMonth: undefined }],
      }),
    ).toEqual([]);
  });

  it('names a grant whose spent or period counters drifted from its charges', () => {
    // A release that did not give the hold back to the grant: 2.00 too many.
    expect(grantProblems(grantRows({ spent: 950 }))).toEqual([
      'grant g1 USD: spent 9.5 ≠ SUCCESS charges 5.5 + open holds 2 — difference 2',
    ]);
    // A refund that gave back to the grant (it must not): spent short by the refund.
    expect(grantProblems(grantRows({ spent: 650, spentDay: { p: D, v: 500 }, spentMonth: { p: M, v: 650 } }))).toEqual([
      'grant g1 USD: spent 6.5 ≠ SUCCESS charges 5.5 + open holds 2 — difference -1',
      `grant g1 USD: spentDay ${D} holds 5 ≠ its SUCCESS charges and open holds of that day 6 — difference -1`,
      `grant g1 USD: spentMonth ${M} holds 6.5 ≠ its SUCCESS charges and open holds of that month 7.5 — difference -1`,
    ]);
    // Yesterday's counter is checked against yesterday's charges.
    expect(grantProblems(grantRows({ spentDay: { p: '2026-11-23', v: 150 } }))).toEqual([]);
    expect(grantProblems(grantRows({ spentDay: { p: '2026-11-23', v: 0 } }))).toEqual([
      'grant g1 USD: spentDay 2026-11-23 holds 0 ≠ its SUCCESS charges and open holds of that day 1.5 — difference -1.5',
    ]);
  });

  it('names a charge under a grant that does not exist, or of another agent or currency than its grant', () => {
    const rows = grantRows();
    expect(grantProblems({ ...rows, charges: [...rows.charges, under('c9', 'SUCCESS', 1, D, { grantId: 'g2' })] })).toEqual([
      'charge c9 was made under grant g2, which does not exist',
    ]);
    const other = under('c9', 'FAILED', 1, D, { agentId: 'a2', currency: 'USDC' });
    expect(grantProblems({ ...rows, charges: [...rows.charges, other] })).toEqual([
      "charge c9 of agent a2 and user u1 in USDC was made under grant g1, which is agent a1's from user u1 in USD",
    ]);
  });
});
