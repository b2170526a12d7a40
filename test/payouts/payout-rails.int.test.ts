/**
 * Crash injection through the REAL rails (functions/rails) against their local stand-ins:
 * LiteSVM behind the JSON-RPC shim, and the PayPal Payouts imitation. Each test stops an attempt
 * at one point — after the claim, after the checkpoint, after sending, after confirming, before
 * the message is deleted — then redelivers, and checks that exactly one payment reached the
 * network and the payout ended COMPLETED.
 */
import { type LocalRails, startLocalRails } from '../../bin/local/rails';
import { config, resetForTests } from '../../functions/config';
import type { Currency } from '../../functions/core/money';
import type { Payout } from '../../functions/core/payouts';
import { PaypalRail } from '../../functions/rails/paypal.rail';
import type { PayoutRail } from '../../functions/rails/rail';
import { priorityFeeLamports, SolanaRail, TOKEN_ACCOUNT_CREATION_COMPUTE_UNITS } from '../../functions/rails/solana.rail';
import { readAgentLedger } from '../../functions/store/charges/balance.repository';
import { getPayout } from '../../functions/store/payouts/payout.repository';
import { drivePayout, type PayoutDeps, type PayoutStep } from '../../functions/use-cases/payouts/payouts';
import { createWithdrawal } from '../support/answers';
import { fundedAgent, payoutIdOf, solanaWallet, withdrawal } from '../support/payouts';
import { createTestTable } from '../support/table';

let rails: LocalRails;
let solana: SolanaRail;
let paypal: PaypalRail;
const railFor = (currency: Currency): PayoutRail => (currency === 'USDC' ? solana : paypal);
const noQueue = { enqueue: async () => undefined };
/** The rent-exempt minimum of an SPL Token account (165 bytes): what one creation costs the hot wallet. */
const TOKEN_ACCOUNT_RENT = 2_039_280n;
const afterLeaseExpiry = () => new Date(Date.now() + (config().PAYOUT_LEASE_SECONDS + 1) * 1000);

beforeAll(async () => {
  await createTestTable();
  rails = await startLocalRails();
  Object.assign(process.env, rails.env);
  resetForTests();
  // The production rails, tuned to give up quickly so a lost answer is a fast transient error.
  solana = new SolanaRail({ confirmTimeoutMs: 300, pollIntervalMs: 20 });
  paypal = new PaypalRail({ requestTimeoutMs: 300, settleTimeoutMs: 300, pollIntervalMs: 20 });
});

afterAll(async () => {
  await rails?.stop();
});

async function payoutTo(
  currency: Currency,
  walletAddress: string,
  amount: string,
  opts: { createTokenAccount?: boolean } = {},
): Promise<{ agentId: string; payoutId: string }> {
  // A Solana wallet receives USDC into its token account: the agent has it, or pays for the payout
  // to create it (createTokenAccount, docs/rails.md).
  if (currency === 'USDC' && !opts.createTokenAccount) rails.solana.createTokenAccount(walletAddress);
  const agentId = await fundedAgent(currency, currency === 'USD' ? 1_000_00 : 1_000_000_000);
  const request = { currency, walletAddress, amount, ...(opts.createTokenAccount ? { createTokenAccount: true } : {}) };
  const payoutId = payoutIdOf(await createWithdrawal(withdrawal(agentId, request), noQueue));
  return { agentId, payoutId };
}

async function payout(ref: { agentId: string; payoutId: string }): Promise<Payout> {
  const found = await getPayout(ref.agentId, ref.payoutId);
  if (!found) throw new Error('payout vanished');
  return found;
}

const landedFor = (payoutId: string) => rails.solana.landed().filter((tx) => tx.memo === `payout:${payoutId}`);

function crashAt(step: PayoutStep): PayoutDeps {
  return {
    railFor,
    hooks: {
      [step]: () => {
        throw new Error(`crash ${step}`);
      },
    },
  };
}

describe('Solana payouts survive a crash at every step', () => {
  it.each<PayoutStep>([
    'afterClaim',
    'afterCheckpoint',
    'afterRail',
    'afterFinalize',
  ])('crash %s, then redelivery: one transaction on chain, the wallet credited once, COMPLETED', async (step) => {
    const wallet = solanaWallet();
    const ref = await payoutTo('USDC', wallet, '10');
    await expect(drivePayout(ref, crashAt(step))).rejects.toThrow(`crash ${step}`);
    const result = await drivePayout(ref, { railFor, clock: afterLeaseExpiry });
    expect(result).toBe(step === 'afterFinalize' ? 'already-final' : 'completed');

    const done = await payout(ref);
    expect(done.status).toBe('COMPLETED');
    expect(rails.solana.tokenBalance(wallet)).toBe(9_700_000n);
    const landed = landedFor(ref.payoutId);
    expect(landed).toHaveLength(1);
    expect(landed[0]?.err).toBeNull();
    expect(done.txHash).toBe(landed[0]?.signature);
    // The checkpoint saved before sending names the transaction that landed.
    expect(done.railState?.signature).toBe(landed[0]?.signature);
  });

  it('crash after sending (the confirmation is never read): the retry finds the landed signature and signs nothing new', async () => {
    const wallet = solanaWallet();
    const ref = await payoutTo('USDC', wallet, '4');
    rails.solana.failNext('getSignatureStatuses', 1);
    await expect(drivePayout(ref, { railFor })).rejects.toThrow();
    expect(landedFor(ref.payoutId)).toHaveLength(1);
    expect((await payout(ref)).status).toBe('PROCESSING');

    expect(await drivePayout(ref, { railFor, clock: afterLeaseExpiry })).toBe('completed');
    expect(landedFor(ref.payoutId)).toHaveLength(1);
    expect(rails.solana.tokenBalance(wallet)).toBe(3_880_000n);
  });

  it('a send the network dropped is re-sent as the same bytes while its blockhash is valid', async () => {
    const wallet = solanaWallet();
    const ref = await payoutTo('USDC', wallet, '2');
    rails.solana.dropNextSends(1);
    expect(await drivePayout(ref, { railFor })).toBe('pending');
    const waiting = await payout(ref);
    expect(waiting).toMatchObject({ status: 'PROCESSING', externalId: waiting.railState?.signature });
    expect(landedFor(ref.payoutId)).toHaveLength(0);

    expect(await drivePayout(ref, { railFor })).toBe('completed');
    const landed = landedFor(ref.payoutId);
    expect(landed.map((tx) => tx.signature)).toEqual([waiting.railState?.signature]);
    expect(rails.solana.tokenBalance(wallet)).toBe(1_940_000n);
  });

  it('a dropped send whose blockhash expired is signed anew, and still only one transaction lands', async () => {
    const wallet = solanaWallet();
    const ref = await payoutTo('USDC', wallet, '3');
    rails.solana.dropNextSends(1);
    expect(await drivePayout(ref, { railFor })).toBe('pending');
    const first = (await payout(ref)).railState?.signature;
    rails.solana.expireBlockhash();

    expect(await drivePayout(ref, { railFor })).toBe('completed');
    const done = await payout(ref);
    expect(done.railState).toMatchObject({ attempt: 2 });
    expect(done.txHash).not.toBe(first);
    expect(landedFor(ref.payoutId).map((tx) => tx.signature)).toEqual([done.txHash]);
    expect(rails.solana.tokenBalance(wallet)).toBe(2_910_000n);
  });
});

describe('Solana payouts that create the token account (createTokenAccount) survive a crash at every step', () => {
  it.each<PayoutStep>([
    'afterClaim',
    'afterCheckpoint',
    'afterRail',
    'afterFinalize',
  ])('crash %s, then redelivery: one create-and-transfer on chain, the account created once, the wallet paid the net once', async (step) => {
    const wallet = solanaWallet();
    const hot = rails.solana.hotWallet.publicKey;
    const lamportsBefore = rails.solana.lamports(hot);
    const ref = await payoutTo('USDC', wallet, '10', { createTokenAccount: true });
    expect(await payout(ref)).toMatchObject({ fee: 300_000, accountCreationFee: 500_000, netAmount: 9_200_000 });

    await expect(drivePayout(ref, crashAt(step))).rejects.toThrow(`crash ${step}`);
    const result = await drivePayout(ref, { railFor, clock: afterLeaseExpiry });
    expect(result).toBe(step === 'afterFinalize' ? 'already-final' : 'completed');

    const done = await payout(ref);
    expect(done.status).toBe('COMPLETED');
    expect(rails.solana.tokenBalance(wallet)).toBe(9_200_000n); // 10 − 0.30 − 0.50
    const landed = landedFor(ref.payoutId);
    expect(landed).toHaveLength(1);
    expect(landed[0]?.err).toBeNull();
    expect(done.txHash).toBe(landed[0]?.signature);
    // One rent and one fee: the hot wallet paid for one account, in the one transaction that landed.
    const limit = config().SOLANA_COMPUTE_UNIT_LIMIT + TOKEN_ACCOUNT_CREATION_COMPUTE_UNITS;
    const fee = 5_000 + priorityFeeLamports(limit, config().SOLANA_PRIORITY_FEE_MICROLAMPORTS);
    expect(lamportsBefore - rails.solana.lamports(hot)).toBe(BigInt(fee) + TOKEN_ACCOUNT_RENT);
  });
});

describe('Solana payouts to a wallet without a USDC token account', () => {
  it('closed after the withdrawal was accepted: FAILED with the reason the agent reads and refunded in full; nothing signed, no rent paid', async () => {
    const wallet = solanaWallet();
    const ref = await payoutTo('USDC', wallet, '1');
    rails.solana.closeTokenAccount(wallet); // the owner may close it at any time
    const hotLamports = rails.solana.lamports(rails.solana.hotWallet.publicKey);

    expect(await drivePayout(ref, { railFor })).toBe('failed');

    expect(await payout(ref)).toMatchObject({
      status: 'FAILED',
      failureReason: 'destination has no USDC token account; create it, or withdraw again with createTokenAccount: true',
    });
    expect((await readAgentLedger(ref.agentId)).balances.USDC).toBe(1_000_000_000);
    expect(landedFor(ref.payoutId)).toHaveLength(0);
    expect(rails.solana.tokenAccountExists(wallet)).toBe(false);
    expect(rails.solana.lamports(rails.solana.hotWallet.publicKey)).toBe(hotLamports);
  });
});

describe('PayPal payouts survive a crash at every step', () => {
  it.each<PayoutStep>([
    'afterClaim',
    'afterCheckpoint',
    'afterRail',
    'afterFinalize',
  ])('crash %s, then redelivery: one batch at PayPal, COMPLETED', async (step) => {
    const ref = await payoutTo('USD', 'agent@example.com', '10.01');
    await expect(drivePayout(ref, crashAt(step))).rejects.toThrow(`crash ${step}`);
    await drivePayout(ref, { railFor, clock: afterLeaseExpiry });
    const done = await payout(ref);
    expect(done.status).toBe('COMPLETED');
    const batch = rails.paypal.batchBySenderId(ref.payoutId);
    expect(batch?.items.map((i) => i.amount.value)).toEqual(['9.71']);
    expect(rails.paypal.batches().filter((b) => b.senderBatchId === ref.payoutId)).toHaveLength(1);
    expect(done.externalId).toBe(batch?.payoutBatchId);
  });

  it("a lost create answer: the retry follows the link in the duplicate error's details, COMPLETED once with one batch, the lock released", async () => {
    const ref = await payoutTo('USD', 'lost@example.com', '7');
    const creates = rails.paypal.createRequests();
    await expect(drivePayout(ref, { railFor })).rejects.toThrow();
    expect(rails.paypal.batchBySenderId(ref.payoutId)).toBeDefined();
    // Only that a create was sent (saved right before it left): PayPal may hold a batch, so the next
    // attempt sends it again, whatever else it learns (docs/rails.md), rather than hold the payout.
    expect((await payout(ref)).railState).toEqual({ rail: 'paypal', createSentAt: expect.any(String) });

    expect(await drivePayout(ref, { railFor, clock: afterLeaseExpiry })).toBe('completed');
    const batch = rails.paypal.batchBySenderId(ref.payoutId);
    expect(rails.paypal.batches().filter((b) => b.senderBatchId === ref.payoutId)).toHaveLength(1);
    expect(rails.paypal.createRequests() - creates).toBe(2); // the lost one and the refused duplicate
    expect(await payout(ref)).toMatchObject({
      status: 'COMPLETED',
      externalId: batch?.payoutBatchId,
      railState: { batchId: batch?.payoutBatchId },
    });
    // The lock went with the final state: the agent can withdraw again.
    await expect(
      createWithdrawal(withdrawal(ref.agentId, { currency: 'USD', walletAddress: 'agent@example.com', amount: '1' }), noQueue),
    ).resolves.toBeDefined();
  });

  it('a duplicate PayPal answers without any link stays PROCESSING, unrefunded, with an operator-alarm error', async () => {
    const ref = await payoutTo('USD', 'nolink@example.com', '7');
    await expect(drivePayout(ref, { railFor })).rejects.toThrow();
    await expect(drivePayout(ref, { railFor, clock: afterLeaseExpiry })).rejects.toMatchObject({ name: 'RailAmbiguousAnswerError' });
    expect((await payout(ref)).status).toBe('PROCESSING');
    expect((await readAgentLedger(ref.agentId)).balances.USD).toBe(1_000_00 - 7_00);
    expect(rails.paypal.batches().filter((b) => b.senderBatchId === ref.payoutId)).toHaveLength(1);
  });

  it('a refused payout is FAILED and the gross amount refunded; a refused create moves no money', async () => {
    const ref = await payoutTo('USD', 'rejected@example.com', '50');
    expect(await drivePayout(ref, { railFor })).toBe('failed');
    expect(await payout(ref)).toMatchObject({ status: 'FAILED' });
    expect(rails.paypal.batchBySenderId(ref.payoutId)).toBeUndefined();
    expect((await readAgentLedger(ref.agentId)).balances.USD).toBe(1_000_00);
  });
});
