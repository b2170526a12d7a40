/**
 * The audit reads typed rows; the store parses them from stored items. Ids come from the key when
 * an item predates its id attributes, and money that cannot be read is named, never counted.
 */
import { auditLedger } from '../../functions/audit/ledger-audit';
import type { LedgerItems } from '../../functions/store/audit/audit.repository';
import { toLedgerRows } from '../../functions/store/audit/ledger-rows.mapper';

const none: Omit<LedgerItems, 'scanned' | 'pages'> = { users: [], agentShards: [], credits: [], charges: [], payouts: [], payoutLocks: [] };

describe('toLedgerRows', () => {
  it('reads ids from the keys when the id attributes are absent', () => {
    const rows = toLedgerRows({
      ...none,
      users: [{ PK: 'USER#u1', SK: 'USER', USD: 5 }],
      agentShards: [{ PK: 'AGENTBAL#a1#3', SK: 'BAL', USDC: 7 }],
      credits: [{ PK: 'CREDITS#u1', SK: 'r1', currency: 'USD', amount: 5 }],
      charges: [
        // Written before the sharding (the agent's one partition), and in a shard (DESIGN §18).
        { PK: 'CHARGES#a1', SK: 'ch1', userId: 'u1', currency: 'USDC', amount: 7, status: 'SUCCESS' },
        { PK: 'CHARGES#a1#17', SK: 'ch2', userId: 'u1', currency: 'USDC', amount: 1, status: 'SUCCESS' },
      ],
      payouts: [{ PK: 'PAYOUTS#a1', SK: 'p1', currency: 'USD', amount: 100, fee: 3, netAmount: 97, status: 'FAILED' }],
      payoutLocks: [{ PK: 'PAYOUTLOCK#a1#USDC', SK: 'LOCK', payoutId: 'p1' }],
      // The fee basis beside the lock (core/fees.ts): the agent and currency from its key when not written.
      payoutFees: [{ PK: 'PAYOUTLOCK#a1#USD', SK: 'FEES', currency: 'USD', withdrawn: 580, feesPaid: 17 }],
      x402Payments: [{ PK: 'X402PAY#a1', SK: 'x402_1', amount: 20_000, transaction: 'sig1' }],
      x402Settlements: [{ PK: 'X402TX#sig1', SK: 'SETTLEMENT', agentId: 'a1', status: 'CREDITED', amount: 20_000, paymentId: 'x402_1' }],
      scanned: 10,
    });
    expect(rows).toEqual({
      users: [{ kind: 'user', userId: 'u1', balances: { USD: 5, USDC: 0 }, held: { USD: 0, USDC: 0 } }],
      shards: [{ kind: 'shard', agentId: 'a1', key: 'AGENTBAL#a1#3', balances: { USD: 0, USDC: 7 } }],
      credits: [{ kind: 'credit', userId: 'u1', creditId: 'r1', currency: 'USD', amount: 5 }],
      charges: [
        { kind: 'charge', chargeId: 'ch1', agentId: 'a1', userId: 'u1', status: 'SUCCESS', currency: 'USDC', amount: 7, refundedAmount: 0 },
        { kind: 'charge', chargeId: 'ch2', agentId: 'a1', userId: 'u1', status: 'SUCCESS', currency: 'USDC', amount: 1, refundedAmount: 0 },
      ],
      payouts: [
        {
          kind: 'payout',
          payoutId: 'p1',
          agentId: 'a1',
          status: 'FAILED',
          currency: 'USD',
          amount: 100,
          fee: 3,
          accountCreationFee: 0,
          netAmount: 97,
        },
      ],
      locks: [{ kind: 'lock', agentId: 'a1', currency: 'USDC', payoutId: 'p1' }],
      feeBases: [{ kind: 'feeBasis', agentId: 'a1', currency: 'USD', withdrawn: 580, feesPaid: 17 }],
      reversals: [],
      x402Payments: [{ kind: 'x402Payment', agentId: 'a1', paymentId: 'x402_1', amount: 20_000, transaction: 'sig1' }],
      x402Settlements: [
        { kind: 'x402Settlement', signature: 'sig1', agentId: 'a1', status: 'CREDITED', amount: 20_000, paymentId: 'x402_1' },
      ],
      grants: [],
      // The payers' statement entries (docs/statement.md): none in these items.
      statements: [],
      tabUsages: [],
      tabs: [],
      onChain: { topupCredits: [], chainCredits: [], unmatched: [] },
      unreadable: [],
      counts: { users: 1, shards: 1, credits: 1, charges: 2, payouts: 1 },
      scanned: 10,
    });
  });

  it('reads what credited or recorded on-chain transfers, and the signatures a USDC payout is known by', () => {
    const rows = toLedgerRows({
      ...none,
      payouts: [
        {
          PK: 'PAYOUTS#a1',
          SK: 'p1',
          currency: 'USDC',
          amount: 100,
          fee: 3,
          netAmount: 97,
          status: 'COMPLETED',
          externalId: 'sigP',
          txHash: 'sigP',
          railState: { signature: 'sigP' },
        },
        {
          PK: 'PAYOUTS#a1',
          SK: 'p2',
          currency: 'USDC',
          amount: 100,
          fee: 3,
          netAmount: 97,
          status: 'PROCESSING',
          railState: { signature: 'sigQ' },
        },
        { PK: 'PAYOUTS#a1', SK: 'p3', currency: 'USD', amount: 100, fee: 3, netAmount: 97, status: 'COMPLETED', externalId: 'PAYPAL-1' },
      ],
      topupCredits: [
        { PK: 'TOPUPCREDIT#SOL#sigT', SK: 'CREDIT', topupId: 't1', userId: 'u1', amount: 5, currency: 'USDC' },
        // A PayPal capture's guard is no on-chain transfer.
        { PK: 'TOPUPCREDIT#PAYPAL#CAP1', SK: 'CREDIT', topupId: 't2', userId: 'u1', amount: 500, currency: 'USD' },
      ],
      chainCredits: [{ PK: 'CHAINCREDIT#sigT', SK: 'CREDIT', rail: 'topup', amount: 5 }],
      unmatched: [{ PK: 'UNMATCHED#sigU', SK: 'UNMATCHED', reason: 'no reference', mint: 'M', amount: '1250000' }],
    });
    expect(rows.payouts.map((p) => [p.payoutId, p.signatures])).toEqual([
      ['p1', ['sigP']],
      ['p2', ['sigQ']],
      ['p3', undefined],
    ]);
    expect(rows.onChain).toEqual({
      topupCredits: [{ kind: 'topupChainCredit', signature: 'sigT', topupId: 't1', userId: 'u1', amount: 5 }],
      chainCredits: [{ kind: 'chainCredit', signature: 'sigT', rail: 'topup', amount: 5 }],
      unmatched: [{ kind: 'unmatched', signature: 'sigU', reason: 'no reference', mint: 'M', amount: '1250000' }],
    });
  });

  it('names every attribute that cannot hold money and leaves it out of the rows', () => {
    const rows = toLedgerRows({
      ...none,
      users: [{ PK: 'USER#u1', SK: 'USER', userId: 'u1', USD: 1.5, USDC: 2, heldUSD: 7, heldUSDC: '3' }],
      credits: [{ PK: 'CREDITS#u1', SK: 'r1', userId: 'u1', currency: 'EUR', amount: '5' }],
      charges: [{ PK: 'CHARGES#a2', SK: 'ch1', agentId: 'a2', userId: 'u1', currency: 'USD', amount: 1, status: 'REFUNDED' }],
    });
    expect(rows.users).toEqual([{ kind: 'user', userId: 'u1', balances: { USDC: 2 }, held: { USD: 7 } }]);
    expect(rows.credits).toEqual([]);
    expect(rows.charges).toEqual([]);
    expect(rows.unreadable).toEqual([
      { problem: 'credit CREDITS#u1/r1: unknown currency "EUR"' },
      { problem: 'credit CREDITS#u1/r1: "5" is not a valid amount in minor units' },
      { problem: 'user u1 USD: 1.5 is not a valid amount in minor units' },
      { problem: 'user u1 heldUSDC: "3" is not a valid amount in minor units' },
      { agentId: 'a2', problem: 'charge ch1: unknown status "REFUNDED"' },
    ]);
    expect(rows.counts).toMatchObject({ users: 1, credits: 1, charges: 1 });
  });
});

describe('grant rows', () => {
  const grant = {
    PK: 'GRANTS#u1',
    SK: 'g1',
    grantId: 'g1',
    userId: 'u1',
    agentId: 'a1',
    currency: 'USD',
    spent: 300,
    spentDay: { p: '2026-11-24', v: 300 },
    spentMonth: { p: '2026-11', v: 300 },
    counted: true,
  };
  const underGrant = {
    PK: 'CHARGES#a1',
    SK: 'ch1',
    agentId: 'a1',
    userId: 'u1',
    currency: 'USD',
    amount: 300,
    status: 'SUCCESS',
    grantId: 'g1',
    createdAt: '2026-11-24T23:59:59.999Z',
    counted: { day: '2026-11-24', month: '2026-11', agent: false },
  };

  it('reads a grant, its counters, and the grant and counted periods of its charges', () => {
    const rows = toLedgerRows({ ...none, grants: [grant], charges: [underGrant, { ...underGrant, SK: 'ch2', counted: undefined }] });
    expect(rows.grants).toEqual([
      {
        kind: 'grant',
        grantId: 'g1',
        userId: 'u1',
        agentId: 'a1',
        currency: 'USD',
        spent: 300,
        spentDay: { p: '2026-11-24', v: 300 },
        spentMonth: { p: '2026-11', v: 300 },
      },
    ]);
    // Without a `counted` record the periods are the createdAt's (core/charges.ts countedOf).
    expect(rows.charges.map((c) => [c.chargeId, c.grantId, c.day, c.month])).toEqual([
      ['ch1', 'g1', '2026-11-24', '2026-11'],
      ['ch2', 'g1', '2026-11-24', '2026-11'],
    ]);
  });

  it('fails the audit when a grant counts more than its charges, and names a counter it cannot read', () => {
    const report = auditLedger({
      ...none,
      credits: [{ PK: 'CREDITS#u1', SK: 'r1', userId: 'u1', currency: 'USD', amount: 300 }],
      agentShards: [{ PK: 'AGENTBAL#a1#0', SK: 'BAL', agentId: 'a1', USD: 300 }],
      users: [{ PK: 'USER#u1', SK: 'USER', userId: 'u1', USD: 0 }],
      charges: [underGrant],
      grants: [{ ...grant, spent: 500 }],
    });
    expect(report.problems).toEqual(['grant g1 USD: spent 5 ≠ SUCCESS charges 3 + open holds 0 — difference 2']);
    expect(report.grants).toEqual({ checked: 1, problems: report.problems });
    const unreadable = toLedgerRows({ ...none, grants: [{ ...grant, spentDay: { v: 3 } }] });
    expect([unreadable.grants, unreadable.unreadable]).toEqual([[], [{ problem: 'grant g1 spentDay: {"v":3} is not a period counter' }]]);
  });
});

describe('auditLedger over held money', () => {
  const credit = { PK: 'CREDITS#u1', SK: 'r1', userId: 'u1', currency: 'USD', amount: 1000 };
  const pending = { PK: 'CHARGES#a1', SK: 'ch1', agentId: 'a1', userId: 'u1', currency: 'USD', amount: 300, status: 'PENDING' };

  it('holds when the held attributes match the PENDING charges', () => {
    const report = auditLedger({
      ...none,
      credits: [credit],
      users: [{ PK: 'USER#u1', SK: 'USER', userId: 'u1', USD: 700, heldUSD: 300 }],
      charges: [pending],
    });
    expect(report.problems).toEqual([]);
    expect(report.currencies.USD).toMatchObject({ userBalances: 700, held: 300, accountedFor: 1000, difference: 0 });
  });

  it('fails, naming the user, when the held attribute drifts from the charges', () => {
    const report = auditLedger({
      ...none,
      credits: [credit],
      users: [{ PK: 'USER#u1', SK: 'USER', userId: 'u1', USD: 700, heldUSD: 301 }],
      charges: [pending],
    });
    expect(report.ok).toBe(false);
    expect(report.heldMismatches).toEqual([{ userId: 'u1', currency: 'USD', heldOnItem: 301, pendingCharges: 300, difference: 1 }]);
    expect(report.problems).toEqual(['user u1 USD: held 3.01 on the user item ≠ PENDING charges 3 — difference 0.01']);
  });
});

describe('auditLedger over unreadable items', () => {
  it('fails, names the item, and still counts the agent it belongs to', () => {
    const report = auditLedger({
      ...none,
      payouts: [{ PK: 'PAYOUTS#a1', SK: 'p1', agentId: 'a1', currency: 'USD', amount: 100, fee: 3, netAmount: -97, status: 'COMPLETED' }],
    });
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual(['payout p1 netAmount: -97 is not a valid amount in minor units']);
    expect(report.counts).toMatchObject({ agents: 1, payouts: 1 });
  });
});
