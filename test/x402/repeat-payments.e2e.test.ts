/**
 * The x402 buyer of docs/x402.md "Get paid by x402 clients", run again and again ("each run is
 * a new payment, credited once"): the stock seller middleware and the stock buyer client against the local stack, with
 * nothing between the runs. With the seller's memo (docs/x402.md "Payments name their seller") the
 * stock client adds no random memo, so two payments by one buyer to one seller of one price differ
 * only by their recent blockhash. On a cluster every block has a new one; the local chain gives
 * every landed transaction a block of its own (bin/local/solana-rpc.ts), so each run signs a new
 * transaction without anyone moving the chain on.
 */
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import bs58 from 'bs58';
import { agentBalanceBody } from '../../functions/contracts/responses/accounts';
import { x402PaymentListSchema } from '../../functions/contracts/x402';
import { expectLedgerBalanced } from '../support/audit';
import { expectBody } from '../support/bodies';
import { useTestStack } from '../support/stack';
import { startServiceSeller } from '../support/x402';

const t = useTestStack();
let seller: { key: string; id: string };
let sellerUrl: string;
let closeSeller: () => Promise<void>;

beforeAll(async () => {
  seller = await t.enabledAgent();
  // docs/examples/seller.mjs (docs/x402.md), on a free port.
  ({ url: sellerUrl, close: closeSeller } = await startServiceSeller(t, seller.key, { '/weather': { price: '$0.01' } }));
});
afterAll(async () => {
  await closeSeller?.();
});
afterEach(async () => {
  await expectLedgerBalanced();
});

/** One run of docs/examples/buyer.mjs (docs/x402.md): a fresh client from the demo payer's key, one paid fetch. */
async function buyerRun() {
  const { solana } = t.stack.rails;
  const signer = await createKeyPairSignerFromBytes(bs58.decode(solana.demoPayer.secretKey));
  const client = new x402Client().register('solana:*', new ExactSvmClient(signer, { rpcUrl: solana.url }));
  const res = await wrapFetchWithPayment(fetch, client)(`${sellerUrl}/weather`);
  const receipt = res.headers.get('payment-response');
  return { status: res.status, transaction: receipt ? decodePaymentResponseHeader(receipt).transaction : undefined };
}

describe('the x402 docs buyer run again and again', () => {
  it('pays one seller the same price three times in a row: three transactions, each credited once', async () => {
    const { solana } = t.stack.rails;
    const treasuryBefore = solana.tokenBalance(solana.hotWallet.publicKey);

    const runs = [await buyerRun(), await buyerRun(), await buyerRun()];

    expect(runs.map((r) => r.status)).toEqual([200, 200, 200]);
    const transactions = runs.map((r) => r.transaction);
    expect(new Set(transactions).size).toBe(3);
    expect(solana.tokenBalance(solana.hotWallet.publicKey) - treasuryBefore).toBe(30_000n);
    const balance = expectBody(await t.call('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': seller.key } }), agentBalanceBody);
    expect(balance.balances.USDC).toBeCloseTo(0.03, 6);
    const list = expectBody(
      await t.call('GET', '/api/v1/agents/x402/payments', { headers: { 'x-agent-key': seller.key } }),
      x402PaymentListSchema,
    );
    expect(list.data.map((p) => p.transaction).sort()).toEqual([...transactions].sort());
    expect(list.data.every((p) => p.amount === 0.01)).toBe(true);
  });
});
