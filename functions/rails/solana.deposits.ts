/**
 * The two Solana JSON-RPC calls the top-up watcher makes — `getSignaturesForAddress` and
 * `getTransaction` — over plain fetch with zod-checked answers. Deliberately not @solana/web3.js:
 * the watcher reads, never signs, and §9 keeps the Solana packages (~740 KB) in the payout worker.
 * It also computes what a transaction paid the deposit wallet (Solana Pay's `validateTransfer`
 * rule: the recipient token account's post − pre balance of the mint), and which of its accounts
 * could be a reference.
 */
import * as z from 'zod';
import { RailUnavailableError } from './errors';
import { solanaRpc } from './solana.json-rpc';

// Where the watcher finds the deposit wallet's token account; it lives with the other addresses.
export { associatedTokenAddress } from './solana.addresses';

export type Commitment = 'confirmed' | 'finalized';

const signatureInfoSchema = z
  .object({
    signature: z.string(),
    slot: z.number(),
    err: z.unknown().optional(),
    confirmationStatus: z.string().nullable().optional(),
    /** Seconds since the epoch; null when the node does not know it. */
    blockTime: z.number().nullable().optional(),
  })
  .loose();
export type SignatureInfo = z.infer<typeof signatureInfoSchema>;

const tokenBalanceSchema = z
  .object({
    accountIndex: z.number().int(),
    mint: z.string(),
    owner: z.string().optional(),
    uiTokenAmount: z.object({ amount: z.string(), decimals: z.number() }).loose(),
  })
  .loose();

const transactionSchema = z
  .object({
    slot: z.number(),
    transaction: z.object({ message: z.object({ accountKeys: z.array(z.string()) }).loose(), signatures: z.array(z.string()) }).loose(),
    meta: z
      .object({
        err: z.unknown().optional(),
        preTokenBalances: z.array(tokenBalanceSchema).nullable().optional(),
        postTokenBalances: z.array(tokenBalanceSchema).nullable().optional(),
        loadedAddresses: z
          .object({ writable: z.array(z.string()), readonly: z.array(z.string()) })
          .loose()
          .nullable()
          .optional(),
      })
      .loose()
      .nullable(),
  })
  .loose();
export type DepositTransaction = z.infer<typeof transactionSchema>;

/** A JSON-RPC client for the watcher, counting its calls (the bench reads `calls`). */
export class SolanaDepositsClient {
  calls = 0;
  private nextId = 1;

  constructor(private readonly rpcUrl: () => Promise<string>) {}

  /** Newest first, at most `limit`, strictly before `before` and after `until` when given. */
  async signaturesFor(
    address: string,
    opts: { limit: number; before?: string; until?: string; commitment: Commitment },
  ): Promise<SignatureInfo[]> {
    const result = await this.call('getSignaturesForAddress', [
      address,
      {
        limit: opts.limit,
        commitment: opts.commitment,
        ...(opts.before ? { before: opts.before } : {}),
        ...(opts.until ? { until: opts.until } : {}),
      },
    ]);
    const parsed = z.array(signatureInfoSchema).safeParse(result);
    if (!parsed.success) throw new RailUnavailableError('solana getSignaturesForAddress answered an unexpected body');
    return parsed.data;
  }

  /** The transaction at `finalized`; undefined when the node does not (yet) have it there. */
  async finalizedTransaction(signature: string): Promise<DepositTransaction | undefined> {
    const result = await this.call('getTransaction', [
      signature,
      { commitment: 'finalized', encoding: 'json', maxSupportedTransactionVersion: 0 },
    ]);
    if (result === null || result === undefined) return undefined;
    const parsed = transactionSchema.safeParse(result);
    if (!parsed.success) throw new RailUnavailableError('solana getTransaction answered an unexpected body');
    return parsed.data;
  }

  private async call(method: string, params: unknown[]): Promise<unknown> {
    this.calls += 1;
    return solanaRpc(await this.rpcUrl(), method, params, { timeoutMs: 15_000, id: this.nextId++ });
  }
}

/** Every account key of the transaction (static keys, then loaded ones): where a reference shows up. */
export function accountKeysOf(tx: DepositTransaction): string[] {
  const loaded = tx.meta?.loadedAddresses;
  return [...tx.transaction.message.accountKeys, ...(loaded?.writable ?? []), ...(loaded?.readonly ?? [])];
}

/**
 * What `tx` paid `owner`'s token accounts, per mint, in raw units: post − pre of each token
 * balance owned by `owner` (a token account created by the transaction counts from 0).
 * Positive entries only: a transaction that moved money out of the deposit wallet paid nothing in.
 */
export function receivedBy(tx: DepositTransaction, owner: string): Map<string, bigint> {
  const key = (b: z.infer<typeof tokenBalanceSchema>) => `${b.accountIndex}:${b.mint}`;
  const pre = new Map<string, bigint>();
  for (const b of tx.meta?.preTokenBalances ?? []) if (b.owner === owner) pre.set(key(b), BigInt(b.uiTokenAmount.amount));
  const received = new Map<string, bigint>();
  for (const b of tx.meta?.postTokenBalances ?? []) {
    if (b.owner !== owner) continue;
    const delta = BigInt(b.uiTokenAmount.amount) - (pre.get(key(b)) ?? 0n);
    if (delta > 0n) received.set(b.mint, (received.get(b.mint) ?? 0n) + delta);
  }
  return received;
}
