/**
 * The audit of money that moves on chain (functions/audit/chain-checks.ts), over hand-made rows and
 * chain histories: each transfer explained by the ledger or named, the ledger's on-chain credits and
 * payouts found on chain, one credit per transfer across the rails.
 */
import { type ChainTransfer, chainCreditProblems, reconcileWallets, type WalletChain } from '../../functions/audit/chain-checks';
import type { LedgerRows } from '../../functions/store/audit/ledger-rows.mapper';
import type { PayoutRow } from '../../functions/store/audit/ledger-rows.payouts';

const HOT = 'HotWallet1111';
const DEPOSIT = 'Deposit11111';
const MINT = 'UsdcMint1111';

type Rows = Pick<LedgerRows, 'payouts' | 'x402Settlements' | 'onChain'>;
const noRows = (): Rows => ({ payouts: [], x402Settlements: [], onChain: { topupCredits: [], chainCredits: [], unmatched: [] } });

const transfer = (signature: string, deltas: Record<string, number>, extra: Partial<ChainTransfer> = {}): ChainTransfer => ({
  signature,
  failed: false,
  deltas: new Map(Object.entries(deltas).map(([k, v]) => [k, BigInt(v)])),
  recipients: [],
  ...extra,
});

/** The hot wallet's and the deposit wallet's histories, balances their sums unless given. */
function chainOf(
  transfers: ChainTransfer[],
  opts: { balances?: Record<string, number>; complete?: boolean; operator?: string[] } = {},
): WalletChain {
  const wallets = [
    [HOT, ['hot wallet', 'x402 treasury']],
    [DEPOSIT, ['deposit wallet']],
  ] as const;
  return {
    mint: MINT,
    wallets: wallets.map(([address, roles]) => {
      const mine = transfers.filter((t) => t.deltas.has(address));
      const sum = mine.reduce((a, t) => a + (t.deltas.get(address) ?? 0n), 0n);
      return {
        address,
        roles: [...roles],
        tokenAccount: `${address}-ata`,
        balance: opts.balances?.[address] !== undefined ? BigInt(opts.balances[address]) : sum,
        signatures: mine.map((t) => t.signature),
        complete: opts.complete ?? true,
      };
    }),
    transfers: new Map(transfers.map((t) => [t.signature, t])),
    operatorWallets: new Set(opts.operator ?? []),
  };
}

const payout = (payoutId: string, status: PayoutRow['status'], netAmount: number, signatures: string[]): PayoutRow => ({
  kind: 'payout',
  payoutId,
  agentId: 'a1',
  status,
  currency: 'USDC',
  amount: netAmount + 3,
  fee: 3,
  accountCreationFee: 0,
  netAmount,
  signatures,
});

describe('reconcileWallets', () => {
  it('explains every transfer of a clean history, and the equation holds', () => {
    const rows = noRows();
    rows.payouts.push(payout('p1', 'COMPLETED', 97, ['sigPay']), payout('p2', 'PROCESSING', 50, ['sigFly']));
    rows.onChain.topupCredits.push({ kind: 'topupChainCredit', signature: 'sigTop', topupId: 't1', userId: 'u1', amount: 500 });
    rows.x402Settlements.push(
      { kind: 'x402Settlement', signature: 'sigX', agentId: 'a2', status: 'CREDITED', amount: 10 },
      { kind: 'x402Settlement', signature: 'sigXp', agentId: 'a2', status: 'PENDING', amount: 20 },
    );
    rows.onChain.unmatched.push(
      { kind: 'unmatched', signature: 'sigU', reason: 'no reference', mint: MINT, amount: '7' },
      { kind: 'unmatched', signature: 'sigW', reason: 'wrong mint', mint: 'Other', amount: '9' },
    );
    const report = reconcileWallets(
      chainOf([
        transfer('sigFund', { [HOT]: 1_000 }),
        transfer('sigTop', { [DEPOSIT]: 500 }),
        transfer('sigX', { [HOT]: 10 }),
        transfer('sigXp', { [HOT]: 20 }),
        transfer('sigU', { [DEPOSIT]: 7 }),
        transfer('sigW', {}),
        transfer('sigPay', { [HOT]: -97 }, { recipients: ['Agent'] }),
        transfer('sigFly', { [HOT]: -50 }, { recipients: ['Agent'] }),
        // An operator's sweep from the deposit wallet to the hot wallet: in and out of the audited set.
        transfer('sigSweep', { [DEPOSIT]: -200, [HOT]: 200 }),
        transfer('sigFailed', {}, { failed: true }),
      ]),
      rows,
    );
    expect(report.problems).toEqual([]);
    expect(report.totals).toEqual({
      onChain: 1_000 + 500 + 10 + 20 + 7 - 97 - 50,
      funding: 1_000,
      topups: 500,
      x402: 10,
      x402Pending: 20,
      unmatched: 7,
      payouts: 147,
      purchases: 0,
      toOperator: 0,
      difference: 0,
    });
    expect(report.uncredited).toEqual([{ signature: 'sigFund', amount: 1_000 }]);
  });

  it('names money out of a wallet that no payout took: a drain, unless it went to an operator wallet', () => {
    const drain = transfer('sigDrain', { [HOT]: -100 }, { recipients: ['Thief'] });
    const chain = chainOf([transfer('sigFund', { [HOT]: 1_000 }), drain]);
    expect(reconcileWallets(chain, noRows()).problems).toEqual([
      `transaction sigDrain took 0.0001 USDC out of the hot wallet and x402 treasury ${HOT} to Thief and is no payout: a drained wallet`,
    ]);
    const swept = reconcileWallets({ ...chain, operatorWallets: new Set(['Thief']) }, noRows());
    expect(swept.problems).toEqual([]);
    expect(swept.totals).toMatchObject({ toOperator: 100, difference: 0 });
  });

  it('names a transfer credited more (or less) than it brought in: a double credit', () => {
    const rows = noRows();
    rows.onChain.topupCredits.push({ kind: 'topupChainCredit', signature: 'sig1', topupId: 't1', userId: 'u1', amount: 250_000 });
    rows.x402Settlements.push({ kind: 'x402Settlement', signature: 'sig1', agentId: 'a1', status: 'CREDITED', amount: 250_000 });
    expect(reconcileWallets(chainOf([transfer('sig1', { [HOT]: 250_000 })]), rows).problems).toEqual([
      'transaction sig1 brought 0.25 USDC into the wallets but the ledger credited 0.5 USDC for it (top-up t1, x402 to agent a1)',
    ]);
  });

  it('names a credit or a COMPLETED payout the chain does not show, once the history is read whole', () => {
    const rows = noRows();
    rows.onChain.topupCredits.push({ kind: 'topupChainCredit', signature: 'ghost', topupId: 't1', userId: 'u1', amount: 5 });
    rows.payouts.push(payout('p1', 'COMPLETED', 97, ['unpaid']));
    expect(reconcileWallets(chainOf([]), rows).problems).toEqual([
      'transaction ghost is credited (top-up t1) but brought nothing into the wallets',
      'payout p1 is COMPLETED but its transaction unpaid took nothing out of the hot wallet',
    ]);
    // A history cut short cannot vouch for what is missing from it: it says so instead.
    expect(reconcileWallets(chainOf([], { complete: false }), rows).problems).toEqual([
      `hot wallet and x402 treasury ${HOT}: its history is longer than the audit reads; raise --chain-max-signatures`,
      `deposit wallet ${DEPOSIT}: its history is longer than the audit reads; raise --chain-max-signatures`,
    ]);
  });

  it('names a payout whose transaction moved another amount, and a FAILED payout whose transaction moved money', () => {
    const rows = noRows();
    rows.payouts.push(payout('p1', 'COMPLETED', 97, ['sig1']), payout('p2', 'FAILED', 50, ['sig2']));
    const chain = chainOf([transfer('sig0', { [HOT]: 1_000 }), transfer('sig1', { [HOT]: -98 }), transfer('sig2', { [HOT]: -50 })]);
    expect(reconcileWallets(chain, rows).problems).toEqual([
      `payout p1 pays net 0.000097 USDC but its transaction sig1 moved -0.000098 USDC of the hot wallet and x402 treasury ${HOT}`,
      'payout p2 is FAILED (refunded to agent a1) but its transaction sig2 moved -0.00005 USDC',
    ]);
  });

  it('names a wallet whose balance its history does not add up to, and a transaction the node did not return', () => {
    const chain = chainOf([transfer('sig1', { [HOT]: 1_000 })], { balances: { [HOT]: 900 } });
    expect(reconcileWallets(chain, noRows()).problems).toEqual([
      `hot wallet and x402 treasury ${HOT} holds 0.0009 USDC but its history adds up to 0.001 USDC`,
    ]);
    const missing: WalletChain = { ...chainOf([]), transfers: new Map([['sigGone', undefined]]) };
    expect(reconcileWallets(missing, noRows()).problems).toEqual([
      "transaction sigGone is in the wallets' history but the node did not return it",
    ]);
  });
});

describe('chainCreditProblems (the table alone)', () => {
  it('names a transfer credited to a top-up and by x402, and a cross-rail guard that stands for no credit', () => {
    const rows = noRows();
    rows.onChain.topupCredits.push({ kind: 'topupChainCredit', signature: 'sig1', topupId: 't1', userId: 'u1', amount: 250_000 });
    rows.x402Settlements.push({ kind: 'x402Settlement', signature: 'sig1', agentId: 'a1', status: 'CREDITED', amount: 250_000 });
    rows.onChain.chainCredits.push(
      { kind: 'chainCredit', signature: 'sig1', rail: 'topup', amount: 250_000 },
      { kind: 'chainCredit', signature: 'sig2', rail: 'x402', amount: 10 },
      { kind: 'chainCredit', signature: 'sig3', rail: 'topup', amount: 10 },
    );
    rows.onChain.topupCredits.push({ kind: 'topupChainCredit', signature: 'sig3', topupId: 't3', userId: 'u1', amount: 11 });
    expect(chainCreditProblems(rows)).toEqual([
      'transaction sig1 is credited twice: 0.25 USDC to top-up t1 of user u1, and 0.25 USDC to agent a1 by x402',
      'transaction sig2: its cross-rail guard says x402 credited it, which has no such credit',
      'transaction sig3: its cross-rail guard says 0.00001 USDC, its topup credit 0.000011 USDC',
    ]);
  });

  it('holds for one credit per transfer, guarded or from before the guard', () => {
    const rows = noRows();
    rows.onChain.topupCredits.push({ kind: 'topupChainCredit', signature: 'sig1', topupId: 't1', userId: 'u1', amount: 5 });
    rows.x402Settlements.push({ kind: 'x402Settlement', signature: 'sig2', agentId: 'a1', status: 'CREDITED', amount: 10 });
    rows.onChain.chainCredits.push({ kind: 'chainCredit', signature: 'sig2', rail: 'x402', amount: 10 });
    expect(chainCreditProblems(rows)).toEqual([]);
  });
});
