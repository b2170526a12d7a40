/**
 * Issue 29: the ledger audit held after every attack the red team reproduced, because it read the
 * table alone. Now it reconciles the wallets with the ledger (functions/audit/chain-checks.ts,
 * docs/topups.md "The audit reconciles the wallets"), so:
 *   - a clean run (a USDC top-up, an x402 payment, a USDC payout) reconciles, transfer by transfer,
 *     and the printed USDC line counts the x402 receipts;
 *   - a double credit (a second ledger credit for one signature, written straight into the table,
 *     consistent enough that every older check holds) fails it, naming the transaction;
 *   - a drained wallet (USDC out of the hot wallet that no payout made: what finding 3's stored
 *     signature landed) fails it, and `npm run audit` exits 1 saying which transaction, until the
 *     operator names the receiving wallet as their own (a sweep to cold storage).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { createTransferCheckedInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import type { PaymentPayload } from '@x402/core/types';
import { x402Client } from '@x402/fetch';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import bs58 from 'bs58';
import { PROJECT_ROOT } from '../../bin/local/dynamodb-local';
import { formatAuditReport, runLedgerAudit } from '../../functions/audit/ledger-audit';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { createWatcher } from '../../functions/use-cases/topups/topup-watch';
import { untilFinal } from '../faults/payout-checks';
import { expectLedgerBalanced, ledgerAudit } from '../support/audit';
import { useTestStack } from '../support/stack';
import { openTopup, pay } from '../topups/support';

const t = useTestStack();
let buyer: x402Client;
/** Wallets the operator has said are theirs (the last test names one). */
const operatorWallets: string[] = [];

beforeAll(async () => {
  const { solana } = t.stack.rails;
  const signer = await createKeyPairSignerFromBytes(bs58.decode(solana.demoPayer.secretKey));
  buyer = new x402Client().register('solana:*', new ExactSvmClient(signer, { rpcUrl: solana.url }));
});
afterEach(async () => {
  await expectLedgerBalanced({ operatorWallets });
});

async function x402Settle(seller: { key: string; id: string }, amount: number): Promise<string> {
  const { solana } = t.stack.rails;
  solana.expireBlockhash();
  const payload: PaymentPayload = await buyer.createPaymentPayload({
    x402Version: 2,
    resource: { url: 'https://seller.example.com/report', description: 'report', mimeType: 'application/json' },
    accepts: [
      {
        scheme: 'exact',
        network: solana.network as `${string}:${string}`,
        asset: solana.mint,
        amount: String(amount),
        payTo: solana.hotWallet.publicKey,
        maxTimeoutSeconds: 60,
        extra: { feePayer: solana.hotWallet.publicKey, memo: `x402:${seller.id}` },
      },
    ],
  });
  const res = await t.call<{ success: boolean; transaction: string }>('POST', '/x402/settle', {
    headers: { 'x-agent-key': seller.key },
    body: { x402Version: 2, paymentPayload: payload, paymentRequirements: payload.accepted },
  });
  expect(res.body.success).toBe(true);
  return res.body.transaction;
}

describe('the audit reconciles the wallets with the ledger', () => {
  it('holds on a clean run: a top-up, an x402 payment and a payout, each transfer explained', async () => {
    const user = await t.fundedUser();
    const topup = (await openTopup(t, user.key, { currency: 'USDC', amount: 7.5 })).body;
    await pay(t, topup.solanaPayUrl ?? '', '7.5');
    await createWatcher()();
    const seller = await t.enabledAgent();
    await x402Settle(seller, 70_807);
    const agent = await t.earningAgent({ USDC: 20 });
    const wallet = Keypair.generate().publicKey.toBase58();
    t.stack.rails.solana.createTokenAccount(wallet);
    const withdrawn = await t.call<{ payoutId: string }>('POST', '/api/v1/agents/withdraw', {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': `w-${randomBytes(4).toString('hex')}` },
      body: { amount: 10, currency: 'USDC', walletAddress: wallet },
    });
    expect(await untilFinal(t, agent.key, withdrawn.body.payoutId)).toBe('COMPLETED');

    const report = await ledgerAudit();
    expect(report.problems).toEqual([]);
    expect(report.wallets?.totals).toMatchObject({ topups: 7_500_000, x402: 70_807, payouts: 9_700_000, difference: 0 });
    const hot = t.stack.rails.solana.hotWallet.publicKey;
    expect(report.wallets?.wallets).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ address: hot, roles: ['hot wallet', 'x402 treasury'] }),
        expect.objectContaining({ address: t.stack.rails.solana.depositWallet, roles: ['deposit wallet'], balance: 7_500_000 }),
      ]),
    );
    // The float the local chain minted to the hot wallet is money in that credits no one: reported.
    expect(report.wallets?.uncredited.map((u) => u.amount)).toContain(1_000_000_000_000);
    // The printed USDC line counts the x402 receipts.
    expect(formatAuditReport(report)).toMatch(/USDC credited [\d.]+ \+ x402 0\.070807 = users/);
  });

  it('fails on a double credit: a second ledger credit for one transfer, straight into the table', async () => {
    const seller = await t.enabledAgent();
    const signature = await x402Settle(seller, 250_000);
    const user = await t.fundedUser();
    // A top-up completed with the same transfer, written as the crediting transaction would:
    // the top-up, its guard, its credit record and the balance. Every older check still holds.
    const topupId = `t_${randomBytes(8).toString('hex')}`;
    const creditId = `c_${randomBytes(8).toString('hex')}`;
    const now = new Date().toISOString();
    const table = config().TABLE_NAME;
    const injected = [
      {
        ...keys.topup(user.id, topupId),
        type: 'Topup',
        id: topupId,
        userId: user.id,
        currency: 'USDC',
        status: 'COMPLETED',
        amount: 250_000,
        externalId: signature,
        createdAt: now,
        expiresAt: now,
        completedAt: now,
      },
      {
        ...keys.topupCredit('SOL', signature),
        type: 'TopupCredit',
        topupId,
        userId: user.id,
        amount: 250_000,
        currency: 'USDC',
        createdAt: now,
      },
      {
        ...keys.credit(user.id, creditId),
        type: 'Credit',
        source: 'topup',
        userId: user.id,
        topupId,
        externalId: signature,
        amount: 250_000,
        currency: 'USDC',
        createdAt: now,
      },
    ];
    for (const Item of injected) await db().send(new PutCommand({ TableName: table, Item }));
    const balance = (delta: number) =>
      db().send(
        new UpdateCommand({
          TableName: table,
          Key: keys.user(user.id),
          UpdateExpression: 'ADD USDC :d',
          ExpressionAttributeValues: { ':d': delta },
        }),
      );
    await balance(250_000);
    try {
      // The table alone already sees it.
      const tableOnly = await runLedgerAudit({ wallets: false });
      expect(tableOnly.ok).toBe(false);
      expect(tableOnly.problems).toContain(
        `transaction ${signature} is credited twice: 0.25 USDC to top-up ${topupId} of user ${user.id}, and 0.25 USDC to agent ${seller.id} by x402`,
      );
      // And the wallets: one transfer of 0.25 in, 0.5 credited.
      const report = await ledgerAudit();
      expect(report.ok).toBe(false);
      expect(report.problems).toContain(
        `transaction ${signature} brought 0.25 USDC into the wallets but the ledger credited 0.5 USDC for it (top-up ${topupId}, x402 to agent ${seller.id})`,
      );
    } finally {
      for (const Item of injected) await db().send(new DeleteCommand({ TableName: table, Key: { PK: Item.PK, SK: Item.SK } }));
      await balance(-250_000);
    }
    expect((await ledgerAudit()).problems).toEqual([]);
  });

  it('fails on a drained wallet: USDC out of the hot wallet that no payout made, until the operator owns the destination', async () => {
    const { solana } = t.stack.rails;
    // What a hot-wallet signature that left the process can land: a transfer out of the treasury.
    const hot = Keypair.fromSecretKey(bs58.decode(solana.hotWallet.secretKey));
    const thief = Keypair.generate().publicKey;
    solana.createTokenAccount(thief.toBase58());
    const mint = new PublicKey(solana.mint);
    const connection = new Connection(solana.url, 'confirmed');
    const { blockhash } = await connection.getLatestBlockhash();
    const tx = new Transaction({ feePayer: hot.publicKey, recentBlockhash: blockhash }).add(
      createTransferCheckedInstruction(
        getAssociatedTokenAddressSync(mint, hot.publicKey),
        mint,
        getAssociatedTokenAddressSync(mint, thief),
        hot.publicKey,
        1_000_000n,
        6,
      ),
    );
    tx.sign(hot);
    const signature = await connection.sendRawTransaction(tx.serialize());

    // The table alone cannot see it (the red team's runs held).
    expect((await runLedgerAudit({ wallets: false })).ok).toBe(true);
    const drained = `transaction ${signature} took 1 USDC out of the hot wallet and x402 treasury ${hot.publicKey.toBase58()} to ${thief.toBase58()} and is no payout: a drained wallet`;
    const report = await ledgerAudit();
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([drained]);

    // `npm run audit` against the same table and chain: exit 1, saying which. (Not spawnSync: the
    // chain and DynamoDB's stand-ins answer from this process.)
    const cli = (...extra: string[]) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const args = ['bin/audit.ts', '--table', config().TABLE_NAME, '--endpoint', config().DYNAMODB_ENDPOINT ?? '', ...extra];
        const child = spawn(process.execPath, [join(PROJECT_ROOT, 'node_modules/tsx/dist/cli.mjs'), ...args], {
          cwd: PROJECT_ROOT,
          env: {
            ...process.env,
            SOLANA_RPC_URL: solana.url,
            USDC_MINT: solana.mint,
            SOLANA_HOT_WALLET_ADDRESS: solana.hotWallet.publicKey,
            SOLANA_DEPOSIT_ADDRESS: solana.depositWallet,
            X402_PAY_TO: solana.hotWallet.publicKey,
          },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk) => {
          stdout += String(chunk);
        });
        child.stderr.on('data', (chunk) => {
          stderr += String(chunk);
        });
        child.on('error', reject);
        child.on('close', (status) => resolve({ status, stdout, stderr }));
      });
    const failed = await cli();
    expect([failed.status, failed.stderr.trim()]).toEqual([1, `audit failed: ${drained}`]);
    expect(failed.stdout).toContain('ledger audit: DOES NOT HOLD');
    expect(failed.stdout).toContain(`✗ ${drained}`);

    // The operator says the destination is their own cold wallet: a sweep, no drain.
    const swept = await cli('--operator-wallet', thief.toBase58());
    expect([swept.status, swept.stderr]).toEqual([0, '']);
    expect(swept.stdout).toContain('− to operator 1 ');
    operatorWallets.push(thief.toBase58());
    expect((await ledgerAudit({ operatorWallets })).ok).toBe(true);
  });
});
