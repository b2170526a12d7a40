/**
 * Attack (or bad luck): the Solana RPC URL is a load balancer over several nodes, and one of them
 * lags. A USDC payout's transaction lands, the worker dies before recording it, the blockhash
 * expires; the next attempt reads the finalized block height from an up-to-date node (past the
 * transaction's last valid height) and the signature's status from the lagging node, which has not
 * seen the block that holds it: "unknown". Reading the two apart, the rail took that as "it never
 * landed and never can", signed a second transaction and paid the payout twice.
 *
 * The property: whatever node answers which call, a payout is paid at most once on chain, and a new
 * transaction is never signed while the first can still land or may have landed unseen.
 * The local chain's `lagNext` makes the next status lookups come from a node far behind the tip
 * (bin/local/solana-rpc.ts), as a lagging node behind a load balancer answers.
 */
import { crash, inject, isPayoutFinalize } from '../faults/inject';
import { expectEachPayoutPaidOnce, paymentsByPayout, untilFinal } from '../faults/payout-checks';
import { auditAfterAll, expectLedgerBalanced } from '../support/audit';
import { solanaWallet } from '../support/payouts';
import { useTestStack } from '../support/stack';

const t = useTestStack(
  { RECONCILE_PENDING_AFTER_SECONDS: '1', RECONCILE_PROCESSING_AFTER_SECONDS: '1' },
  { payouts: { visibilityTimeoutSeconds: 2, reconcileIntervalMs: 200 } },
);
auditAfterAll();
afterAll(async () => {
  await expectEachPayoutPaidOnce(t);
});

describe('a lagging RPC node behind a load balancer never makes a payout pay twice', () => {
  it('a landed payout whose blockhash expired, looked up on a node that has not seen it, is not signed again', async () => {
    const chain = t.stack.rails.solana;
    const agent = await t.earningAgent({ USDC: 20 });
    const wallet = solanaWallet();
    chain.createTokenAccount(wallet);
    const died = inject({
      command: 'TransactWriteItemsCommand',
      match: isPayoutFinalize,
      times: 1,
      // The transaction landed and the worker dies before recording it. Meanwhile the blockhash
      // expires, and the next status lookups reach a node 1,000 blocks behind (the transaction's
      // block is newer than that node's tip), while every other call reaches the tip.
      error: () => {
        chain.expireBlockhash();
        chain.lagNext('getSignatureStatuses', 1_000, 4);
        return crash();
      },
    });
    let payoutId: string;
    try {
      const res = await t.call<{ payoutId: string }>('POST', '/api/v1/agents/withdraw', {
        headers: { 'x-agent-key': agent.key, 'idempotency-key': `lag-${Date.now()}` },
        body: { amount: 10, currency: 'USDC', walletAddress: wallet },
      });
      expect(res.status).toBe(200);
      payoutId = res.body.payoutId;
      expect(await untilFinal(t, agent.key, payoutId, 60_000)).toBe('COMPLETED');
    } finally {
      died.remove();
    }
    expect(died.hits()).toBe(1);
    // One transfer of the net on chain, not two.
    expect(paymentsByPayout(t).get(payoutId)).toBe(1);
    expect(chain.tokenBalance(wallet)).toBe(9_700_000n);
    await expectLedgerBalanced();
  });
});
