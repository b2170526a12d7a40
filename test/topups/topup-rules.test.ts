/**
 * The pure parts of top-ups: the audit's top-up check, what a transaction paid the deposit
 * wallet (Solana Pay's post − pre rule), the deposit token account's address, and the Solana Pay URL.
 */
import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Keypair } from '@solana/web3.js';
import { topupProblems } from '../../functions/audit/topup-checks';
import { solanaPayUrl } from '../../functions/core/topups';
import { associatedTokenAddress, type DepositTransaction, receivedBy } from '../../functions/rails/solana.deposits';
import type { TopupAuditRows } from '../../functions/store/topups/topup-audit.repository';

const completed = (over: Partial<TopupAuditRows['topups'][number]> = {}) => ({
  userId: 'u1',
  topupId: 't1',
  status: 'COMPLETED',
  amount: 500,
  currency: 'USD',
  externalId: 'CAP1',
  holdsOpenSlot: true,
  ...over,
});

describe('the audit’s top-up check', () => {
  it('holds for a completed top-up with one matching credit and one guard', () => {
    expect(
      topupProblems({
        topups: [completed(), completed({ topupId: 't2', status: 'PENDING', amount: 100 })],
        credits: [{ userId: 'u1', topupId: 't1', amount: 500, currency: 'USD' }],
        guards: [{ key: 'TOPUPCREDIT#PAYPAL#CAP1', topupId: 't1', amount: 500 }],
        openCounters: [{ userId: 'u1', open: 1 }],
      }),
    ).toEqual([]);
  });

  it('finds a completed top-up credited twice, or never', () => {
    const credit = { userId: 'u1', topupId: 't1', amount: 500, currency: 'USD' };
    const guard = { key: 'TOPUPCREDIT#PAYPAL#CAP1', topupId: 't1', amount: 500 };
    expect(topupProblems({ topups: [completed()], credits: [credit, credit], guards: [guard], openCounters: [] })).toEqual([
      'top-up t1 is COMPLETED with 2 credit records (expected 1)',
    ]);
    expect(topupProblems({ topups: [completed()], credits: [], guards: [], openCounters: [] })).toEqual([
      'top-up t1 is COMPLETED with 0 credit records (expected 1)',
      'top-up t1 is COMPLETED with 0 credit-once guards (expected 1)',
    ]);
  });

  it('finds a credit for an expired top-up, a credit of another amount, and a credit naming no top-up', () => {
    expect(
      topupProblems({
        topups: [completed(), completed({ topupId: 't2', status: 'EXPIRED' })],
        credits: [
          { userId: 'u1', topupId: 't1', amount: 499, currency: 'USD' },
          { userId: 'u1', topupId: 't2', amount: 1, currency: 'USD' },
          { userId: 'u9', topupId: 't9', amount: 7, currency: 'USDC' },
        ],
        guards: [{ key: 'TOPUPCREDIT#PAYPAL#CAP1', topupId: 't1', amount: 500 }],
        openCounters: [],
      }),
    ).toEqual([
      'top-up t1 received 500 USD for u1 but its credit is 499 USD for u1',
      'top-up t2 is EXPIRED but has 1 credit records and 0 guards',
      'credit of 7 USDC to u9 names top-up t9, which does not exist',
    ]);
  });

  it('finds an open-top-up counter that differs from the PENDING top-ups holding a slot (a FAILED one holds none)', () => {
    const pending = (topupId: string, userId: string, holdsOpenSlot = true) =>
      completed({ topupId, userId, status: 'PENDING', externalId: undefined, holdsOpenSlot });
    expect(
      topupProblems({
        topups: [
          pending('t1', 'u1'),
          pending('t2', 'u1'),
          pending('t3', 'u1', false),
          pending('t4', 'u2'),
          completed({ topupId: 't5', userId: 'u3', status: 'FAILED', externalId: undefined }),
        ],
        credits: [],
        guards: [],
        openCounters: [
          { userId: 'u1', open: 2 },
          { userId: 'u2', open: 0 },
          { userId: 'u3', open: 1 },
        ],
      }),
    ).toEqual(['user u2 has 1 open top-ups but their counter says 0', 'user u3 has 0 open top-ups but their counter says 1']);
  });
});

describe('the audit’s reversal check', () => {
  const credit = { userId: 'u1', topupId: 't1', amount: 500, currency: 'USD' };
  const guard = (reversed?: number) => ({ key: 'TOPUPCREDIT#PAYPAL#CAP1', topupId: 't1', amount: 500, ...(reversed ? { reversed } : {}) });
  const reversal = (refundId: string, amount: number) => ({ refundId, captureId: 'CAP1', topupId: 't1', amount });
  const base = { topups: [completed()], credits: [credit], openCounters: [] };

  it('holds when each reversal has its guard and the capture’s credit sums them', () => {
    expect(
      topupProblems({
        ...base,
        guards: [guard(300)],
        reversals: [reversal('R1', 100), reversal('R2', 200)],
        reversalGuards: [
          { refundId: 'R1', captureId: 'CAP1' },
          { refundId: 'R2', captureId: 'CAP1' },
        ],
      }),
    ).toEqual([]);
  });

  it('finds a reversal applied twice or without its guard, and more reversed than credited', () => {
    expect(
      topupProblems({
        ...base,
        guards: [guard(600)],
        reversals: [reversal('R1', 300), reversal('R1', 300)],
        reversalGuards: [{ refundId: 'R1', captureId: 'CAP1' }],
      }),
    ).toEqual(['refund R1 has 2 reversal records and 1 guards (expected 1 and 1)', 'capture CAP1: 600 reversed of 500 credited']);
    expect(topupProblems({ ...base, guards: [guard()], reversals: [reversal('R3', 50)], reversalGuards: [] })).toEqual([
      'refund R3 has 1 reversal records and 0 guards (expected 1 and 1)',
      'capture CAP1: its credit says 0 reversed, its reversals 50',
    ]);
  });
});

describe('deposits', () => {
  const balance = (accountIndex: number, mint: string, owner: string, amount: string) => ({
    accountIndex,
    mint,
    owner,
    uiTokenAmount: { amount, decimals: 6 },
  });
  const tx = (pre: ReturnType<typeof balance>[], post: ReturnType<typeof balance>[]): DepositTransaction => ({
    slot: 1,
    transaction: { message: { accountKeys: [] }, signatures: ['s'] },
    meta: { err: null, preTokenBalances: pre, postTokenBalances: post },
  });

  it('counts what the deposit wallet’s token accounts gained, per mint, a new account from zero', () => {
    const received = receivedBy(
      tx(
        [balance(1, 'USDC', 'payer', '9000000'), balance(2, 'USDC', 'deposit', '1000000')],
        [balance(1, 'USDC', 'payer', '6500000'), balance(2, 'USDC', 'deposit', '3500000'), balance(3, 'OTHER', 'deposit', '42')],
      ),
      'deposit',
    );
    expect(received).toEqual(
      new Map([
        ['USDC', 2_500_000n],
        ['OTHER', 42n],
      ]),
    );
  });

  it('counts nothing for money leaving the deposit wallet', () => {
    expect(receivedBy(tx([balance(2, 'USDC', 'deposit', '5')], [balance(2, 'USDC', 'deposit', '1')]), 'deposit').size).toBe(0);
  });

  it('derives the deposit token account exactly as spl-token does', () => {
    for (let i = 0; i < 50; i++) {
      const owner = Keypair.generate().publicKey;
      const mint = Keypair.generate().publicKey;
      expect(associatedTokenAddress(owner.toBase58(), mint.toBase58())).toBe(getAssociatedTokenAddressSync(mint, owner, true).toBase58());
    }
  });

  it('writes a Solana Pay transfer request with the mint, the reference and a label', () => {
    expect(solanaPayUrl({ address: 'ADDR', mint: 'MINT', reference: 'REF' }, 'Agent Payment Service')).toBe(
      'solana:ADDR?spl-token=MINT&reference=REF&label=Agent%20Payment%20Service&message=Top%20up%20your%20balance',
    );
  });
});
