/**
 * The Solana JSON-RPC reads of the top-up watcher — `getSignaturesForAddress` and `getTransaction`
 * — and of the ledger audit's wallet reconciliation (functions/audit/wallet-audit.ts: those two,
 * `getTransaction` batched, and `getAccountInfo` for a token account's balance), over plain fetch
 * with zod-checked answers. Deliberately not @solana/web3.js: both read, never sign, and §9 keeps
 * the Solana packages (~740 KB) in the payout worker. It also computes what a transaction paid the
 * deposit wallet (Solana Pay's `validateTransfer` rule: the recipient token account's post − pre
 * balance of the mint), how it moved each wallet's balance, and which of its accounts could be a
 * reference.
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
    return parseTransaction(await this.call('getTransaction', [signature, transactionOptions('finalized')]));
  }

  /**
   * Many transactions at `commitment`, in JSON-RPC batches of `batchSize` (one HTTP request each, as
   * every RPC provider takes them); a signature the node does not have maps to undefined.
   */
  async transactions(
    signatures: readonly string[],
    commitment: Commitment,
    batchSize = 100,
  ): Promise<Map<string, DepositTransaction | undefined>> {
    const found = new Map<string, DepositTransaction | undefined>();
    for (let start = 0; start < signatures.length; start += batchSize) {
      const batch = signatures.slice(start, start + batchSize);
      const results = await this.batch(
        batch.map((signature) => ({ method: 'getTransaction', params: [signature, transactionOptions(commitment)] })),
      );
      for (const [i, signature] of batch.entries()) found.set(signature, parseTransaction(results[i]));
    }
    return found;
  }

  /**
   * The raw balance of an SPL token account (`getAccountInfo`, base64: the amount is the u64 at
   * byte 64 of the account's data); undefined when the account does not exist.
   */
  async tokenAccountBalance(account: string, commitment: Commitment): Promise<bigint | undefined> {
    const result = await this.call('getAccountInfo', [account, { encoding: 'base64', commitment }]);
    const parsed = accountInfoSchema.safeParse(result);
    if (!parsed.success) throw new RailUnavailableError('solana getAccountInfo answered an unexpected body');
    const value = parsed.data.value;
    if (!value) return undefined;
    const data = Buffer.from(value.data[0], 'base64');
    if (data.length < 72) throw new RailUnavailableError(`solana account ${account} is not a token account`);
    return data.readBigUInt64LE(64);
  }

  private async call(method: string, params: unknown[]): Promise<unknown> {
    this.calls += 1;
    return solanaRpc(await this.rpcUrl(), method, params, { timeoutMs: 15_000, id: this.nextId++ });
  }

  /** One HTTP request carrying several JSON-RPC calls; their results in the calls' order. */
  private async batch(calls: readonly { method: string; params: unknown[] }[]): Promise<unknown[]> {
    if (calls.length === 0) return [];
    this.calls += calls.length;
    const first = this.nextId;
    this.nextId += calls.length;
    const body = calls.map((c, i) => ({ jsonrpc: '2.0', id: first + i, method: c.method, params: c.params }));
    let res: Response;
    try {
      res = await fetch(await this.rpcUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      throw new RailUnavailableError('solana batch request failed', { cause: error });
    }
    if (!res.ok) throw new RailUnavailableError(`solana batch request answered ${res.status}`);
    const answers = z.array(batchAnswerSchema).safeParse(await res.json().catch(() => undefined));
    if (!answers.success) throw new RailUnavailableError('solana batch request answered an unexpected body');
    // Answers may come in any order: matched by id.
    const byId = new Map(answers.data.map((a) => [a.id, a]));
    return calls.map((c, i) => {
      const answer = byId.get(first + i);
      if (!answer || answer.error) throw new RailUnavailableError(`solana ${c.method} failed: ${answer?.error?.message ?? 'no answer'}`);
      return answer.result;
    });
  }
}

const batchAnswerSchema = z
  .object({ id: z.number(), result: z.unknown().optional(), error: z.object({ message: z.string().optional() }).loose().optional() })
  .loose();

const accountInfoSchema = z
  .object({
    value: z
      .object({ data: z.tuple([z.string(), z.literal('base64')]) })
      .loose()
      .nullable(),
  })
  .loose();

const transactionOptions = (commitment: Commitment) => ({ commitment, encoding: 'json', maxSupportedTransactionVersion: 0 });

function parseTransaction(result: unknown): DepositTransaction | undefined {
  if (result === null || result === undefined) return undefined;
  const parsed = transactionSchema.safeParse(result);
  if (!parsed.success) throw new RailUnavailableError('solana getTransaction answered an unexpected body');
  return parsed.data;
}

/** Every account key of the transaction (static keys, then loaded ones): where a reference shows up. */
export function accountKeysOf(tx: DepositTransaction): string[] {
  const loaded = tx.meta?.loadedAddresses;
  return [...tx.transaction.message.accountKeys, ...(loaded?.writable ?? []), ...(loaded?.readonly ?? [])];
}

/**
 * How `tx` moved each of `owners`' balances of `mint`, in raw units (post − pre over the token
 * accounts each owns; a token account created by the transaction counts from 0, one it closed ends
 * at 0). Signed: negative is money that left. Owners it did not touch are absent.
 */
export function tokenDeltas(tx: DepositTransaction, mint: string, owners: ReadonlySet<string>): Map<string, bigint> {
  const deltas = new Map<string, bigint>();
  const add = (owner: string | undefined, amount: bigint) => {
    if (owner === undefined || !owners.has(owner)) return;
    deltas.set(owner, (deltas.get(owner) ?? 0n) + amount);
  };
  for (const b of tx.meta?.postTokenBalances ?? []) if (b.mint === mint) add(b.owner, BigInt(b.uiTokenAmount.amount));
  for (const b of tx.meta?.preTokenBalances ?? []) if (b.mint === mint) add(b.owner, -BigInt(b.uiTokenAmount.amount));
  for (const [owner, delta] of deltas) if (delta === 0n) deltas.delete(owner);
  return deltas;
}

/**
 * Who else `tx` paid `mint` to: the owners outside `audited` whose balance rose (where money that
 * left an audited wallet went).
 */
export function otherRecipients(tx: DepositTransaction, mint: string, audited: ReadonlySet<string>): string[] {
  const everyone = new Set<string>();
  for (const b of [...(tx.meta?.preTokenBalances ?? []), ...(tx.meta?.postTokenBalances ?? [])]) {
    if (b.mint === mint && b.owner !== undefined && !audited.has(b.owner)) everyone.add(b.owner);
  }
  return [...tokenDeltas(tx, mint, everyone)].filter(([, delta]) => delta > 0n).map(([owner]) => owner);
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
