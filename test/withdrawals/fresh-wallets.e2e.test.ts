/**
 * Withdrawals to wallets without a USDC token account (DESIGN §19, docs/payouts.md), over HTTP
 * against the local stack: the real withdraw handler asking LiteSVM (behind the JSON-RPC stand-in)
 * before it commits, the real worker creating the account in the transaction that pays, and the
 * worker dying after that transaction was sent. The ledger audit and the one-payment-per-payout
 * check run after the last test.
 */
import { resetForTests } from '../../functions/config';
import { crash, inject, isPayoutFinalize } from '../faults/inject';
import { expectEachPayoutPaidOnce, paymentsByPayout, untilFinal } from '../faults/payout-checks';
import { auditAfterAll, expectLedgerBalanced } from '../support/audit';
import { solanaWallet } from '../support/payouts';
import { useTestStack } from '../support/stack';

const t = useTestStack(
  { RECONCILE_PENDING_AFTER_SECONDS: '1', RECONCILE_PROCESSING_AFTER_SECONDS: '1', AUTH_CACHE_TTL_MS: '0' },
  { payouts: { visibilityTimeoutSeconds: 2, reconcileIntervalMs: 200 } },
);

auditAfterAll();
afterAll(async () => {
  await expectEachPayoutPaidOnce(t);
});

interface WithdrawAnswer {
  success: boolean;
  payoutId: string;
  breakdown: Record<string, unknown>;
  error?: string;
}

let keySeq = 0;
const newKey = () => `e2e-fresh-${process.pid}-${++keySeq}-${Date.now()}`;

function withdraw(agentKey: string, body: Record<string, unknown>, idempotencyKey: string = newKey()) {
  return t.call<WithdrawAnswer>('POST', '/api/v1/agents/withdraw', {
    headers: { 'x-agent-key': agentKey, 'idempotency-key': idempotencyKey },
    body,
  });
}

async function usdcBalance(agentKey: string): Promise<number> {
  const res = await t.call<{ balances: { USDC: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': agentKey } });
  return res.body.balances.USDC;
}

async function payoutsOf(agentKey: string): Promise<Record<string, unknown>[]> {
  const res = await t.call<{ payouts: Record<string, unknown>[] }>('GET', '/api/v1/agents/withdraw', {
    headers: { 'x-agent-key': agentKey },
  });
  return res.body.payouts;
}

async function payoutOf(agentKey: string, payoutId: string): Promise<Record<string, unknown>> {
  return (
    await t.call<Record<string, unknown>>('GET', `/api/v1/agents/withdraw?payoutId=${payoutId}`, { headers: { 'x-agent-key': agentKey } })
  ).body;
}

const chain = () => t.stack.rails.solana;
const landedFor = (payoutId: string) =>
  chain()
    .landed()
    .filter((tx) => tx.memo === `payout:${payoutId}`);
const hotLamports = () => chain().lamports(chain().hotWallet.publicKey);
/** An SPL Token account's rent-exempt minimum (165 bytes): what one creation costs the hot wallet. */
const TOKEN_ACCOUNT_RENT = 2_039_280n;

describe('a USDC withdrawal to a wallet without a USDC token account', () => {
  it('is refused at once with 400 destination has no USDC token account; nothing changes, the key stays free', async () => {
    const agent = await t.earningAgent({ USDC: 20 });
    const wallet = solanaWallet();
    const key = newKey();
    const res = await withdraw(agent.key, { amount: 10, currency: 'USDC', walletAddress: wallet }, key);
    expect([res.status, res.body]).toEqual([400, { error: 'destination has no USDC token account' }]);
    const explicit = await withdraw(agent.key, { amount: 10, currency: 'USDC', walletAddress: wallet, createTokenAccount: false });
    expect([explicit.status, explicit.body]).toEqual([400, { error: 'destination has no USDC token account' }]);
    expect(await usdcBalance(agent.key)).toBe(20);
    expect(await payoutsOf(agent.key)).toEqual([]);
    expect(chain().tokenAccountExists(wallet)).toBe(false);
    // Refusals are not remembered: the same key may carry the corrected request.
    const corrected = await withdraw(agent.key, { amount: 10, currency: 'USDC', walletAddress: wallet, createTokenAccount: true }, key);
    expect(corrected.status).toBe(200);
    expect(await untilFinal(t, agent.key, corrected.body.payoutId)).toBe('COMPLETED');
  });

  it('with createTokenAccount: 200 with the creation fee in the breakdown; the worker creates the account and pays exactly the net, once', async () => {
    const agent = await t.earningAgent({ USDC: '25.5' });
    const wallet = solanaWallet();
    const lamportsBefore = hotLamports();
    const body = { amount: 20, currency: 'USDC', walletAddress: wallet, createTokenAccount: true };
    const key = newKey();
    const res = await withdraw(agent.key, body, key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      payoutId: expect.stringMatching(/^p[0-9a-z]{26}$/),
      breakdown: {
        grossAmount: 20,
        platformFeeRate: '3%',
        platformFee: 0.6,
        accountCreationFee: 0.5,
        netAmount: 18.9,
        currency: 'USDC',
        walletAddress: wallet,
        network: 'SOL',
      },
    });
    expect(await usdcBalance(agent.key)).toBe(5.5);

    expect(await untilFinal(t, agent.key, res.body.payoutId)).toBe('COMPLETED');
    expect(await payoutOf(agent.key, res.body.payoutId)).toMatchObject({
      status: 'COMPLETED',
      amount: 20,
      fee: 0.6,
      accountCreationFee: 0.5,
      netAmount: 18.9,
      failureReason: null,
    });
    expect(chain().tokenAccountExists(wallet)).toBe(true);
    expect(chain().tokenBalance(wallet)).toBe(18_900_000n);
    expect(landedFor(res.body.payoutId)).toEqual([expect.objectContaining({ err: null })]);
    // The hot wallet paid one account's rent (and one transaction's fee, a few thousand lamports).
    const spent = lamportsBefore - hotLamports();
    expect(spent > TOKEN_ACCOUNT_RENT && spent < TOKEN_ACCOUNT_RENT + 20_000n).toBe(true);

    // A retry with the same key: the first answer, word for word, and nothing moves again.
    const again = await withdraw(agent.key, body, key);
    expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([200, res.text, 'true']);
    expect(await usdcBalance(agent.key)).toBe(5.5);
    expect((await payoutsOf(agent.key)).map((p) => p.id)).toEqual([res.body.payoutId]);
    expect(landedFor(res.body.payoutId)).toHaveLength(1);
    expect(chain().tokenBalance(wallet)).toBe(18_900_000n);
  });

  it('with createTokenAccount to a wallet that already has its account: no creation fee, the whole net, no rent', async () => {
    const agent = await t.earningAgent({ USDC: 10 });
    const wallet = solanaWallet();
    chain().createTokenAccount(wallet);
    const lamportsBefore = hotLamports();
    const res = await withdraw(agent.key, { amount: 10, currency: 'USDC', walletAddress: wallet, createTokenAccount: true });
    expect(res.status).toBe(200);
    expect(res.body.breakdown).toMatchObject({ platformFee: 0.3, accountCreationFee: 0, netAmount: 9.7 });
    expect(await untilFinal(t, agent.key, res.body.payoutId)).toBe('COMPLETED');
    expect(await payoutOf(agent.key, res.body.payoutId)).toMatchObject({ accountCreationFee: 0, netAmount: 9.7 });
    expect(chain().tokenBalance(wallet)).toBe(9_700_000n);
    expect(lamportsBefore - hotLamports()).toBeLessThan(20_000n);
  });

  it('refuses a net at or below zero with 400 amount too small to cover fees, and changes nothing', async () => {
    const agent = await t.earningAgent({ USDC: 5 });
    const saved = process.env.ACCOUNT_CREATION_FEE;
    // An operator's fee of 0.97: a 1 USDC withdrawal would pay 1 − 0.03 − 0.97 = 0.
    process.env.ACCOUNT_CREATION_FEE = '0.97';
    resetForTests();
    try {
      const res = await withdraw(agent.key, { amount: 1, currency: 'USDC', walletAddress: solanaWallet(), createTokenAccount: true });
      expect([res.status, res.body]).toEqual([400, { error: 'amount too small to cover fees' }]);
    } finally {
      if (saved === undefined) delete process.env.ACCOUNT_CREATION_FEE;
      else process.env.ACCOUNT_CREATION_FEE = saved;
      resetForTests();
    }
    expect(await usdcBalance(agent.key)).toBe(5);
    expect(await payoutsOf(agent.key)).toEqual([]);
  });

  it('refuses createTokenAccount on a USD withdrawal with 400 naming the field', async () => {
    const agent = await t.earningAgent({ USD: 5 });
    const res = await withdraw(agent.key, { amount: 5, currency: 'USD', walletAddress: 'agent@example.com', createTokenAccount: true });
    expect([res.status, res.body]).toEqual([400, { error: 'createTokenAccount is only valid for USDC withdrawals' }]);
    const notBool = await withdraw(agent.key, { amount: 5, currency: 'USDC', walletAddress: solanaWallet(), createTokenAccount: 'yes' });
    expect([notBool.status, notBool.body]).toEqual([400, { error: 'createTokenAccount must be a boolean' }]);
    expect(await payoutsOf(agent.key)).toEqual([]);
  });

  it('answers 503 with Retry-After when the Solana RPC node cannot tell, changing nothing; the retry goes through', async () => {
    const agent = await t.earningAgent({ USDC: 10 });
    const body = { amount: 10, currency: 'USDC', walletAddress: solanaWallet(), createTokenAccount: true };
    const key = newKey();
    chain().failNext('getAccountInfo', 1);
    const down = await withdraw(agent.key, body, key);
    expect([down.status, down.body, down.headers.get('retry-after')]).toEqual([
      503,
      { error: 'solana network unavailable, retry later' },
      '5',
    ]);
    expect(await usdcBalance(agent.key)).toBe(10);
    expect(await payoutsOf(agent.key)).toEqual([]);
    const retry = await withdraw(agent.key, body, key);
    expect(retry.status).toBe(200);
    expect(await untilFinal(t, agent.key, retry.body.payoutId)).toBe('COMPLETED');
  });
});

describe('a payout that creates the token account, under faults', () => {
  it('the worker dies after its create-and-transfer landed, before recording it: the redelivery creates nothing and pays nothing again', async () => {
    const agent = await t.earningAgent({ USDC: 20 });
    const wallet = solanaWallet();
    const lamportsBefore = hotLamports();
    const died = inject({ command: 'TransactWriteItemsCommand', match: isPayoutFinalize, times: 1, error: crash });
    let payoutId: string;
    try {
      const res = await withdraw(agent.key, { amount: 10, currency: 'USDC', walletAddress: wallet, createTokenAccount: true });
      expect(res.status).toBe(200);
      payoutId = res.body.payoutId;
      expect(await untilFinal(t, agent.key, payoutId)).toBe('COMPLETED');
    } finally {
      died.remove();
    }
    expect(died.hits()).toBe(1);
    // The next attempt found the first one's transaction on chain instead of signing another.
    expect(landedFor(payoutId)).toHaveLength(1);
    expect(paymentsByPayout(t).get(payoutId)).toBe(1);
    expect(chain().tokenBalance(wallet)).toBe(9_200_000n); // 10 − 0.30 − 0.50
    const spent = lamportsBefore - hotLamports();
    expect(spent > TOKEN_ACCOUNT_RENT && spent < TOKEN_ACCOUNT_RENT + 20_000n).toBe(true);
    expect(await usdcBalance(agent.key)).toBe(10);
    await expectLedgerBalanced();
  });

  it('its first transaction never reached the chain: the same bytes, create included, are sent again; one lands', async () => {
    const agent = await t.earningAgent({ USDC: 20 });
    const wallet = solanaWallet();
    chain().dropNextSends(1);
    const res = await withdraw(agent.key, { amount: 10, currency: 'USDC', walletAddress: wallet, createTokenAccount: true });
    expect(res.status).toBe(200);
    expect(await untilFinal(t, agent.key, res.body.payoutId, 60_000)).toBe('COMPLETED');
    expect(landedFor(res.body.payoutId)).toHaveLength(1);
    expect(chain().tokenBalance(wallet)).toBe(9_200_000n);
    await expectLedgerBalanced();
  });
});
