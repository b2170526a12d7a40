/**
 * The local Solana stand-in's blocks and blockhashes (bin/local/solana-rpc.ts), over its JSON-RPC
 * as a client sees them: every landed transaction is a block with a new blockhash; a transaction
 * lands while its blockhash is one the stand-in issued and has not expired, older ones included;
 * an unknown or expired blockhash and a signature that already landed are refused in a real node's
 * words; the recent blockhashes survive a restart, and a state file from before them still loads.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { BLOCKHASH_LIFETIME, type LocalSolana, startLocalSolana } from '../../bin/local/solana-rpc';

interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

async function rpc(chain: LocalSolana, method: string, ...params: unknown[]): Promise<RpcAnswer> {
  const res = await fetch(chain.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as RpcAnswer;
}

async function latest(chain: LocalSolana): Promise<{ blockhash: string; lastValidBlockHeight: number }> {
  const answer = (await rpc(chain, 'getLatestBlockhash')).result as { value: { blockhash: string; lastValidBlockHeight: number } };
  return answer.value;
}

const isValid = async (chain: LocalSolana, blockhash: string) =>
  ((await rpc(chain, 'isBlockhashValid', blockhash, { commitment: 'confirmed' })).result as { value: boolean }).value;

/** The demo payer sends `lamports` to a fresh account, under `blockhash`, signed (base64). */
function transfer(
  chain: LocalSolana,
  blockhash: string,
  lamports = 1_000_000,
  to = Keypair.generate().publicKey,
): { base64: string; signature: string; to: string } {
  const payer = Keypair.fromSecretKey(bs58.decode(chain.demoPayer.secretKey));
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports }),
  );
  tx.sign(payer);
  return { base64: tx.serialize().toString('base64'), signature: bs58.encode(tx.signature ?? new Uint8Array()), to: to.toBase58() };
}

const send = (chain: LocalSolana, base64: string, skipPreflight = false) =>
  rpc(chain, 'sendTransaction', base64, { encoding: 'base64', skipPreflight, preflightCommitment: 'confirmed' });
const simulate = (chain: LocalSolana, base64: string, config: Record<string, unknown> = {}) =>
  rpc(chain, 'simulateTransaction', base64, { encoding: 'base64', commitment: 'confirmed', ...config });
const status = async (chain: LocalSolana, signature: string) =>
  ((await rpc(chain, 'getSignatureStatuses', [signature])).result as { value: [{ slot: number; err: unknown } | null] }).value[0];

/** A real node's preflight failure for a refused transaction (agave rpc.rs, SendTransactionPreflightFailure). */
const preflightFailure = (err: string, message: string) => ({
  code: -32002,
  message: `Transaction simulation failed: ${message}`,
  data: { err, logs: [], accounts: null, unitsConsumed: 0, returnData: null },
});

describe('the local Solana stand-in: a blockhash per block', () => {
  let chain: LocalSolana;
  beforeAll(async () => {
    chain = await startLocalSolana();
  });
  afterAll(async () => {
    await chain.stop();
  });

  it('makes every landed transaction a block with a new blockhash, valid for 150 blocks after it', async () => {
    const before = await latest(chain);
    const height = chain.blockHeight();
    expect(before.lastValidBlockHeight).toBe(height + BLOCKHASH_LIFETIME);

    const tx = transfer(chain, before.blockhash);
    expect((await send(chain, tx.base64)).result).toBe(tx.signature);

    const after = await latest(chain);
    expect(chain.blockHeight()).toBe(height + 1);
    expect(after.blockhash).not.toBe(before.blockhash);
    expect(after.lastValidBlockHeight).toBe(height + 1 + BLOCKHASH_LIFETIME);
    expect((await rpc(chain, 'getSlot')).result).toBe(height + 1);
    expect(await status(chain, tx.signature)).toMatchObject({ slot: height + 1, err: null });
  });

  it('signs the same transfer twice as two transactions once one landed between them, and lands both', async () => {
    const to = Keypair.generate().publicKey;
    const a = transfer(chain, (await latest(chain)).blockhash, 2_000_000, to);
    expect((await send(chain, a.base64)).result).toBe(a.signature);
    const b = transfer(chain, (await latest(chain)).blockhash, 2_000_000, to);

    expect(b.signature).not.toBe(a.signature);
    expect((await send(chain, b.base64)).result).toBe(b.signature);
    expect(await status(chain, b.signature)).toMatchObject({ err: null });
    expect(chain.lamports(to.toBase58())).toBe(4_000_000n);
  });

  it('lands a transaction under an older blockhash while it is valid, up to exactly its last valid height', async () => {
    const old = await latest(chain);
    chain.mintTo(Keypair.generate().publicKey.toBase58(), 1n); // other blocks land meanwhile
    chain.advanceBlocks(old.lastValidBlockHeight - chain.blockHeight()); // now at its last valid height
    expect((await latest(chain)).blockhash).not.toBe(old.blockhash);
    expect(await isValid(chain, old.blockhash)).toBe(true);

    const tx = transfer(chain, old.blockhash);
    expect((await simulate(chain, tx.base64)).result).toMatchObject({ value: { err: null } });
    expect((await send(chain, tx.base64)).result).toBe(tx.signature);
    expect(await status(chain, tx.signature)).toMatchObject({ err: null });
    expect(chain.lamports(tx.to)).toBe(1_000_000n);
  });

  it('refuses an expired blockhash as a node does: BlockhashNotFound, nothing lands', async () => {
    const old = await latest(chain);
    chain.advanceBlocks(old.lastValidBlockHeight - chain.blockHeight() + 1); // one past its last valid height
    expect(await isValid(chain, old.blockhash)).toBe(false);
    const landedBefore = chain.landed().length;
    const tx = transfer(chain, old.blockhash);

    expect((await send(chain, tx.base64)).error).toEqual(preflightFailure('BlockhashNotFound', 'Blockhash not found'));
    expect((await simulate(chain, tx.base64)).result).toEqual({
      context: { slot: chain.blockHeight() },
      value: { err: 'BlockhashNotFound', logs: [], accounts: null, unitsConsumed: 0, returnData: null },
    });
    // Without preflight the node takes it and answers its signature; no leader lands it.
    expect((await send(chain, tx.base64, true)).result).toBe(tx.signature);
    expect(await status(chain, tx.signature)).toBeNull();
    expect(chain.landed()).toHaveLength(landedBefore);
    expect(chain.lamports(tx.to)).toBe(0n);
  });

  it('refuses a blockhash it never issued the same way', async () => {
    const made = bs58.encode(randomBytes(32));
    expect(await isValid(chain, made)).toBe(false);
    const tx = transfer(chain, made);
    expect((await send(chain, tx.base64)).error).toEqual(preflightFailure('BlockhashNotFound', 'Blockhash not found'));
    expect((await send(chain, tx.base64, true)).result).toBe(tx.signature);
    expect(await status(chain, tx.signature)).toBeNull();
  });

  it('expireBlockhash expires every blockhash issued so far, and issues a new one', async () => {
    const older = await latest(chain);
    chain.mintTo(Keypair.generate().publicKey.toBase58(), 1n);
    const newest = await latest(chain);
    chain.expireBlockhash();
    expect(chain.blockHeight()).toBe(newest.lastValidBlockHeight + 1);
    expect(await isValid(chain, older.blockhash)).toBe(false);
    expect(await isValid(chain, newest.blockhash)).toBe(false);
    const fresh = await latest(chain);
    expect(await isValid(chain, fresh.blockhash)).toBe(true);
    expect(fresh.lastValidBlockHeight).toBe(chain.blockHeight() + BLOCKHASH_LIFETIME);
  });

  it('lands a signature once: a resend is AlreadyProcessed (preflight and simulation), dropped without preflight', async () => {
    const tx = transfer(chain, (await latest(chain)).blockhash);
    expect((await send(chain, tx.base64, true)).result).toBe(tx.signature);
    const landed = chain.landed().length;

    expect((await send(chain, tx.base64, true)).result).toBe(tx.signature);
    expect((await send(chain, tx.base64)).error).toEqual(
      preflightFailure('AlreadyProcessed', 'This transaction has already been processed'),
    );
    expect((await simulate(chain, tx.base64)).result).toMatchObject({ value: { err: 'AlreadyProcessed' } });
    expect(chain.landed()).toHaveLength(landed);
    expect(chain.lamports(tx.to)).toBe(1_000_000n);
  });

  it('simulates under its newest blockhash with replaceRecentBlockhash, and says which', async () => {
    const old = await latest(chain);
    chain.expireBlockhash();
    const tx = transfer(chain, old.blockhash);
    const newest = await latest(chain);

    expect((await simulate(chain, tx.base64, { replaceRecentBlockhash: true })).result).toMatchObject({
      value: { err: null, replacementBlockhash: newest },
    });
    expect((await simulate(chain, tx.base64, { replaceRecentBlockhash: true, sigVerify: true })).error).toEqual({
      code: -32602,
      message: 'sigVerify may not be used with replaceRecentBlockhash',
    });
  });
});

describe('the local Solana stand-in across restarts', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'solana-rpc-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps its recent blockhashes: a transaction signed under an older one before the restart lands after it', async () => {
    const stateFile = join(dir, 'kept.json');
    const first = await startLocalSolana({ stateFile });
    const old = await latest(first);
    first.mintTo(Keypair.generate().publicKey.toBase58(), 1n);
    const newest = await latest(first);
    const height = first.blockHeight();
    const tx = transfer(first, old.blockhash);
    await first.stop();

    const second = await startLocalSolana({ stateFile });
    try {
      expect(second.blockHeight()).toBe(height);
      expect(await latest(second)).toEqual(newest);
      expect(await isValid(second, old.blockhash)).toBe(true);
      expect((await send(second, tx.base64)).result).toBe(tx.signature);
      expect(second.lamports(tx.to)).toBe(1_000_000n);
      expect((await latest(second)).blockhash).not.toBe(newest.blockhash);
    } finally {
      await second.stop();
    }
  });

  it('loads a state file from before the queue: its one blockhash stays valid, and blocks move on from it', async () => {
    const stateFile = join(dir, 'old.json');
    const first = await startLocalSolana({ stateFile });
    const landedBefore = first.landed().length;
    const saved = await latest(first);
    const tx = transfer(first, saved.blockhash);
    await first.stop();
    // What the stand-in wrote before it kept a blockhash per block: one blockhash, no list.
    const { blockhashes: _, ...old } = JSON.parse(readFileSync(stateFile, 'utf8')) as Record<string, unknown>;
    writeFileSync(stateFile, JSON.stringify(old));

    const second = await startLocalSolana({ stateFile });
    let next: Awaited<ReturnType<typeof latest>>;
    try {
      expect(await latest(second)).toEqual(saved);
      expect((await send(second, tx.base64)).result).toBe(tx.signature);
      expect(second.landed()).toHaveLength(landedBefore + 1);
      next = await latest(second);
      expect(next.blockhash).not.toBe(saved.blockhash);
      expect(await isValid(second, saved.blockhash)).toBe(true);
    } finally {
      await second.stop();
    }
    // Written back with the list: both blockhashes, oldest first.
    const written = JSON.parse(readFileSync(stateFile, 'utf8')) as { blockhash: string; blockhashes: [string, number][] };
    expect(written.blockhash).toBe(next.blockhash);
    expect(written.blockhashes).toEqual([
      [saved.blockhash, saved.lastValidBlockHeight],
      [next.blockhash, next.lastValidBlockHeight],
    ]);
  });
});
