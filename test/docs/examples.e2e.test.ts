/**
 * The ready-to-run examples run as their pages say (`node docs/examples/<file>` from the repository's
 * root folder), against the test stack: purchase.mjs buys from a stock x402 seller (stock
 * `@x402/express` with the stock `@x402/svm` facilitator, paying a wallet outside the service) with a
 * grant key; seller.mjs sells through the service's facilitator and buyer.mjs pays it from the demo
 * payer's keypair file. Each a process of its own, as a user runs it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../bin/local/local-server';
import { railFor } from '../../functions/rails';
import { createReconciler } from '../../functions/reconciler/reconciler';
import { purchaseChain } from '../../functions/x402/purchase-chain';
import { expectLedgerBalanced } from '../support/audit';
import { eventually } from '../support/eventually';
import { useTestStack } from '../support/stack';
import { usePurchaseFixture } from '../support/x402';

const ROOT = join(__dirname, '..', '..');
const t = useTestStack();
const x402 = usePurchaseFixture(t);
afterEach(async () => {
  await expectLedgerBalanced();
});

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
});

/** `node docs/examples/<file>` with `env` added; its output as it goes, and its exit. */
function example(file: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [`docs/examples/${file}`], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

describe('docs/examples', () => {
  it('purchase.mjs (README "Buy from x402 sellers") buys from a stock seller with a grant key: 200, a purchase of 0.01 USDC', async () => {
    const { agent, grant } = await x402.buyer({ usdc: 1 });
    const sellerBefore = t.stack.rails.solana.tokenBalance(x402.seller.wallet);
    t.stack.rails.solana.advanceBlocks(1);
    const run = example('purchase.mjs', { BASE: t.stack.url, AGENT_KEY: agent.key, GRANT_KEY: grant.key, URL: x402.resource });
    expect(await run.exited).toBe(0);
    expect(run.output()).toContain("200 { forecast: 'sunny' }");
    expect(t.stack.rails.solana.tokenBalance(x402.seller.wallet) - sellerBefore).toBe(10_000n);
    // The reconciler (every 10 s under npm start) finds the transfer on chain and captures the purchase.
    await createReconciler({ railFor, purchaseChain })();
    const purchases = await t.call<{ data: { amount: number; currency: string; payTo: string; status: string }[] }>(
      'GET',
      '/api/v1/agents/x402/purchases',
      { headers: { 'x-agent-key': agent.key } },
    );
    expect(purchases.body.data).toEqual([
      expect.objectContaining({ amount: 0.01, currency: 'USDC', payTo: x402.seller.wallet, status: 'SUCCESS' }),
    ]);
  });

  it('seller.mjs sells through the service and buyer.mjs pays it from the demo payer (docs/x402.md "Get paid by x402 clients")', async () => {
    const agent = await t.enabledAgent();
    const port = await freePort();
    const seller = example('seller.mjs', { BASE: t.stack.url, AGENT_KEY: agent.key, PORT: String(port) });
    await eventually('seller.mjs to listen', () => seller.output().includes(`selling http://127.0.0.1:${port}/weather`) || undefined, {
      timeoutMs: 60_000,
    });
    const { solana } = t.stack.rails;
    const dir = mkdtempSync(join(tmpdir(), 'examples-demo-payer-'));
    try {
      // What npm start writes for the demo payer (bin/local/demo.ts), for this stack's chain.
      const file = join(dir, 'demo-payer.json');
      writeFileSync(
        file,
        JSON.stringify({
          publicKey: solana.demoPayer.publicKey,
          secretKey: solana.demoPayer.secretKey,
          rpcUrl: solana.url,
          usdcMint: solana.mint,
        }),
      );
      const buyer = example('buyer.mjs', { DEMO_PAYER: file, URL: `http://127.0.0.1:${port}/weather` });
      expect(await buyer.exited).toBe(0);
      expect(buyer.output()).toContain("200 { forecast: 'sunny' }");
      expect(buyer.output()).toContain('success: true');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      seller.child.kill('SIGTERM');
    }
    const payments = await t.call<{ data: { amount: number }[] }>('GET', '/api/v1/agents/x402/payments', {
      headers: { 'x-agent-key': agent.key },
    });
    expect(payments.body.data).toEqual([expect.objectContaining({ amount: 0.01 })]);
  });
});
