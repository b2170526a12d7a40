/** Helpers for withdrawal and payout tests against DynamoDB Local. */
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ed25519 } from '@noble/curves/ed25519.js';
import bs58 from 'bs58';
import { type LocalSolana, startLocalSolana } from '../../bin/local/solana-rpc';
import { config, resetForTests } from '../../functions/config';
import { withdrawSchema } from '../../functions/contracts/request.schemas';
import type { Currency } from '../../functions/core/money';
import { CURRENCIES } from '../../functions/core/money';
import { shardCredit } from '../../functions/store/charges/balance.repository';
import { db } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { transactWrite } from '../../functions/store/transact';
import type { WithdrawInput } from '../../functions/use-cases/payouts/withdrawals';
import { agentRef, testAgent } from './agents';
import { viaSchema } from './requests';

/** A fresh Solana wallet address (an ed25519 public key, so on the curve). */
export function solanaWallet(): string {
  return bs58.encode(ed25519.getPublicKey(randomBytes(32)));
}

let chain: LocalSolana | undefined;

/**
 * A LiteSVM chain behind the JSON-RPC stand-in, for tests that call the withdraw use case directly:
 * the configuration points at it (SOLANA_RPC_URL, USDC_MINT), so a USDC withdrawal looks its
 * wallet's token account up there, and `withdrawal()` gives USDC withdrawals a wallet whose token
 * account exists (`readyWallet`). The caller stops it in afterAll.
 */
export async function startTestChain(): Promise<LocalSolana> {
  chain = await startLocalSolana();
  Object.assign(process.env, { SOLANA_RPC_URL: chain.url, USDC_MINT: chain.mint });
  resetForTests();
  return chain;
}

/** A fresh wallet whose USDC token account exists on the test chain, as a wallet app makes it. */
export function readyWallet(): string {
  if (!chain) throw new Error('no test chain: call startTestChain() first');
  const wallet = solanaWallet();
  chain.createTokenAccount(wallet);
  return wallet;
}

/** Credits `minor` units to one balance shard of `agentId` (what charges do). */
export async function fundAgent(agentId: string, currency: Currency, minor: number, shard = 0): Promise<void> {
  await transactWrite([shardCredit(agentId, shard, currency, minor)]);
}

/** A new enabled agent (its item written, see ./agents.ts) with `minor` units earned in `currency`. */
export async function fundedAgent(currency: Currency, minor: number): Promise<string> {
  const { id: agentId } = await testAgent();
  await fundAgent(agentId, currency, minor);
  return agentId;
}

let seq = 0;

interface WithdrawalFields {
  /** The amount as a client sends it (a JSON number literal). */
  amount: string;
  currency: Currency;
  walletAddress: string;
  idempotencyKey: string;
  createTokenAccount: boolean;
}

/**
 * A withdraw use-case input built through the route's schema (a bad amount throws its 400). A USDC
 * withdrawal without a wallet goes to a ready wallet (its token account exists) when a test chain
 * runs, else to a fresh wallet.
 */
export function withdrawal(agentId: string, overrides: Partial<WithdrawalFields> = {}): WithdrawInput {
  const currency = overrides.currency ?? 'USD';
  const { idempotencyKey = `wd-${process.pid}-${++seq}`, amount = '10', walletAddress, ...rest } = overrides;
  const body = viaSchema(withdrawSchema, {
    amount,
    currency,
    walletAddress: walletAddress ?? (currency === 'USD' ? 'agent@example.com' : chain ? readyWallet() : solanaWallet()),
    ...rest,
  });
  return { agent: agentRef(agentId), idempotencyKey, ...body };
}

/** The payoutId of a 200 withdraw answer. */
export function payoutIdOf(result: { statusCode: number; rawBody?: string }): string {
  if (result.statusCode !== 200 || !result.rawBody) throw new Error(`withdrawal not accepted: ${result.statusCode} ${result.rawBody}`);
  const id = (JSON.parse(result.rawBody) as { payoutId?: unknown }).payoutId;
  if (typeof id !== 'string') throw new Error('no payoutId in the answer');
  return id;
}

/** The agent's payout lock in whichever currency holds one (tests here use one currency per agent). */
export async function lockOf(agentId: string): Promise<Record<string, unknown> | undefined> {
  for (const currency of CURRENCIES) {
    const key = keys.payoutLock(agentId, currency);
    const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: key, ConsistentRead: true }));
    if (out.Item) return out.Item;
  }
  return undefined;
}
