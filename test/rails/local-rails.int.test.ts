/**
 * startLocalRails: its `env` is all the rails need (through the config module, as in the worker),
 * and with a data directory both stand-ins keep their state across a restart.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ComputeBudgetInstruction, Keypair, Transaction } from '@solana/web3.js';
import { type LocalRails, startLocalRails } from '../../bin/local/rails';
import { resetForTests } from '../../functions/config';
import { railFor } from '../../functions/rails';
import { MemoryCheckpoint } from './checkpoint';

const saved = { ...process.env };

function useEnv(env: Record<string, string>): void {
  Object.assign(process.env, env, { SOLANA_COMMITMENT: 'confirmed' });
  resetForTests();
}

afterEach(() => {
  process.env = { ...saved };
  resetForTests();
});

describe('startLocalRails', () => {
  let rails: LocalRails;
  beforeAll(async () => {
    rails = await startLocalRails();
  });
  afterAll(async () => {
    await rails.stop();
  });

  it('gives the environment the rails read, and both rails pay through it', async () => {
    expect(Object.keys(rails.env).sort()).toEqual([
      'PAYPAL_BASE_URL',
      'PAYPAL_CLIENT_ID',
      'PAYPAL_CLIENT_SECRET',
      // Top-ups: where USDC is paid in, and the webhook subscription the PayPal imitation signs for.
      'PAYPAL_WEBHOOK_ID',
      'SIGNER_FUNCTION_NAME',
      'SOLANA_DEPOSIT_ADDRESS',
      'SOLANA_HOT_WALLET_ADDRESS',
      'SOLANA_HOT_WALLET_SECRET',
      'SOLANA_RPC_URL',
      'USDC_MINT',
      // x402 (docs/x402.md): the local chain presents itself as devnet; the treasury is the hot wallet.
      'X402_NETWORK',
      'X402_PAY_TO',
    ]);
    useEnv(rails.env);
    const wallet = Keypair.generate().publicKey.toBase58();
    rails.solana.createTokenAccount(wallet);

    const usdc = await railFor('USDC').pay(
      { payoutId: `po_${randomUUID()}`, currency: 'USDC', netAmount: 970_000, destination: wallet },
      new MemoryCheckpoint(),
    );
    const usd = await railFor('USD').pay(
      { payoutId: `po_${randomUUID()}`, currency: 'USD', netAmount: 97, destination: 'agent@example.com' },
      new MemoryCheckpoint(),
    );

    expect(usdc.kind).toBe('completed');
    expect(rails.solana.tokenBalance(wallet)).toBe(970_000n);
    expect(usd.kind).toBe('completed');
    expect(rails.paypal.batches().at(-1)?.items[0]?.amount).toEqual({ value: '0.97', currency: 'USD' });
  });

  it('railFor builds the Solana rail with the configured compute-unit price and limit', async () => {
    useEnv({ ...rails.env, SOLANA_PRIORITY_FEE_MICROLAMPORTS: '12345', SOLANA_COMPUTE_UNIT_LIMIT: '50000' });
    const wallet = Keypair.generate().publicKey.toBase58();
    rails.solana.createTokenAccount(wallet);
    const hot = rails.solana.hotWallet.publicKey;
    const solBefore = rails.solana.lamports(hot);
    const checkpoint = new MemoryCheckpoint();

    const outcome = await railFor('USDC').pay(
      { payoutId: `po_${randomUUID()}`, currency: 'USDC', netAmount: 970_000, destination: wallet },
      checkpoint,
    );

    expect(outcome.kind).toBe('completed');
    const [limit, price] = Transaction.from(Buffer.from(String(checkpoint.saved?.tx), 'base64')).instructions;
    expect(limit && ComputeBudgetInstruction.decodeSetComputeUnitLimit(limit).units).toBe(50_000);
    expect(price && ComputeBudgetInstruction.decodeSetComputeUnitPrice(price).microLamports).toBe(12_345n);
    expect(solBefore - rails.solana.lamports(hot)).toBe(5_000n + 618n); // 50,000 × 12,345 / 10^6 = 617.25, rounded up
  });
});

describe('startLocalRails with a data directory', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'local-rails-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps chain, keys and PayPal batches across a restart; a payout signed before it is sent after it', async () => {
    const wallet = Keypair.generate().publicKey.toBase58();
    const instruction = { payoutId: `po_${randomUUID()}`, currency: 'USDC' as const, netAmount: 1_000_000, destination: wallet };
    const checkpoint = new MemoryCheckpoint(undefined, true); // the worker dies right after saving

    const first = await startLocalRails({ dataDir: dir });
    first.solana.createTokenAccount(wallet);
    useEnv(first.env);
    await railFor('USD').pay(
      { payoutId: 'po_kept', currency: 'USD', netAmount: 500, destination: 'kept@example.com' },
      new MemoryCheckpoint(),
    );
    await expect(railFor('USDC').pay(instruction, checkpoint)).rejects.toThrow('simulated crash');
    const env = first.env;
    await first.stop();

    const second = await startLocalRails({ dataDir: dir });
    try {
      expect(second.env.USDC_MINT).toBe(env.USDC_MINT);
      expect(second.env.SOLANA_HOT_WALLET_SECRET).toBe(env.SOLANA_HOT_WALLET_SECRET);
      expect(second.paypal.batchBySenderId('po_kept')).toBeDefined();
      useEnv(second.env);
      const outcome = await railFor('USDC').pay(instruction, checkpoint.redeliver());
      expect(outcome).toMatchObject({ kind: 'completed', externalId: checkpoint.saved?.signature });
      expect(second.solana.tokenBalance(wallet)).toBe(1_000_000n);
    } finally {
      await second.stop();
    }
  });
});
