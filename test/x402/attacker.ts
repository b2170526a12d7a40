/**
 * What the x402 attackers of test/security/ share (issue 29): exact transactions built by hand
 * with @solana/web3.js (what a buyer who does not use the stock client can send), the requirements
 * a seller's middleware would send with them, a Solana RPC that records every request the service
 * sends to the chain, and a search for a string (a signature) in every item of the file's table.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createTransferCheckedInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import {
  ComputeBudgetProgram,
  type Keypair,
  PublicKey,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import bs58 from 'bs58';
import { config } from '../../functions/config';
import { logger } from '../../functions/observability/logger';
import { db } from '../../functions/store/client';

const MEMO_PROGRAM = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

/** The chain's current blockhash, asked of the RPC as a wallet would. */
export async function latestBlockhash(rpcUrl: string): Promise<string> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getLatestBlockhash', params: [] }),
  });
  return ((await res.json()) as { result: { value: { blockhash: string } } }).result.value.blockhash;
}

/**
 * An `exact` transaction laid out as the stock scheme expects (compute unit limit, compute unit
 * price, TransferChecked, memo), with every field the attacker's: who pays the fee, whose USDC
 * moves (and who authorises it), where to, and the compute budget the fee payer is charged for.
 * Signed by `signers` only (the fee payer's slot stays empty, for the facilitator to fill).
 */
export function exactTransaction(tx: {
  feePayer: string;
  /** Owner of the source token account; the transfer's authority. */
  from: string;
  to: string;
  mint: string;
  amount: bigint;
  computeUnits: number;
  microLamports: number;
  memo?: string;
  /** Instructions after the memo (the layout allows Lighthouse's there). */
  extra?: TransactionInstruction[];
  blockhash: string;
  signers: Keypair[];
}): { base64: string; message: Uint8Array } {
  const mint = new PublicKey(tx.mint);
  const from = new PublicKey(tx.from);
  const instructions = [
    ComputeBudgetProgram.setComputeUnitLimit({ units: tx.computeUnits }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: tx.microLamports }),
    createTransferCheckedInstruction(
      getAssociatedTokenAddressSync(mint, from),
      mint,
      getAssociatedTokenAddressSync(mint, new PublicKey(tx.to)),
      from,
      tx.amount,
      6,
    ),
    ...(tx.memo !== undefined ? [new TransactionInstruction({ programId: MEMO_PROGRAM, keys: [], data: Buffer.from(tx.memo) })] : []),
    ...(tx.extra ?? []),
  ];
  const message = new TransactionMessage({
    payerKey: new PublicKey(tx.feePayer),
    recentBlockhash: tx.blockhash,
    instructions,
  }).compileToV0Message();
  const transaction = new VersionedTransaction(message);
  if (tx.signers.length > 0) transaction.sign(tx.signers);
  return { base64: Buffer.from(transaction.serialize()).toString('base64'), message: message.serialize() };
}

/** What a seller's middleware sends to `/x402/verify` and `/x402/settle` for one payment. */
export function requirementsFor(r: {
  network: string;
  mint: string;
  treasury: string;
  feePayer: string;
  amount: bigint | string;
  memo?: string;
}): PaymentRequirements {
  return {
    scheme: 'exact',
    network: r.network as PaymentRequirements['network'],
    asset: r.mint,
    amount: String(r.amount),
    payTo: r.treasury,
    maxTimeoutSeconds: 60,
    extra: { feePayer: r.feePayer, ...(r.memo !== undefined ? { memo: r.memo } : {}) },
  };
}

/** The `PAYMENT-SIGNATURE` payload of a transaction, as the stock client shapes it. */
export const payloadOf = (transaction: string, accepted: PaymentRequirements): PaymentPayload => ({
  x402Version: 2,
  resource: { url: 'https://seller.example.com/weather', description: 'a forecast', mimeType: 'application/json' },
  accepted,
  payload: { transaction },
});

/**
 * A Solana JSON-RPC endpoint in front of the chain's stand-in that keeps every request body it
 * forwards: the service pointed at it (SOLANA_RPC_URL) shows everything it sent the chain, which a
 * provider's logs would hold. It waits for `pointAt` (the stand-in starts with the stack).
 */
export interface RecordingRpc {
  url: string;
  requests: string[];
  pointAt(target: string): void;
  close(): Promise<void>;
}

export async function startRecordingRpc(): Promise<RecordingRpc> {
  let pointAt: (target: string) => void = () => undefined;
  const target = new Promise<string>((resolve) => {
    pointAt = resolve;
  });
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push(body);
      void (async () => {
        try {
          const answer = await fetch(await target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
          res.end(Buffer.from(await answer.arrayBuffer()));
        } catch {
          res.writeHead(502);
          res.end();
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    pointAt,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Every form a 64-byte signature can be written in: base58 (RPC, explorers), base64 (wire), hex. */
export const signatureForms = (signature: Uint8Array): string[] => [
  bs58.encode(signature),
  Buffer.from(signature).toString('base64'),
  Buffer.from(signature).toString('hex'),
];

/** Whether `text` holds the signature, in any of its forms or inside a base64 transaction it carries. */
export function holdsSignature(text: string, signature: Uint8Array): boolean {
  if (signatureForms(signature).some((form) => text.includes(form))) return true;
  // A base64 wire transaction in an RPC request (sendTransaction, simulateTransaction) carries it as bytes.
  for (const [candidate] of text.matchAll(/[A-Za-z0-9+/]{88,}={0,2}/g)) {
    if (Buffer.from(candidate, 'base64').includes(Buffer.from(signature))) return true;
  }
  return false;
}

/** Every item of this file's table, as the JSON an attacker reading the table (or its stream, or a backup) would see. */
export async function tableItems(): Promise<string[]> {
  const items: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db().send(new ScanCommand({ TableName: config().TABLE_NAME, ExclusiveStartKey: start }));
    for (const item of page.Items ?? []) items.push(JSON.stringify(item));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/**
 * Everything the service logged (its logger, at any level, and the console the stock packages
 * write to) while `work` ran, each line as text: where a signature must not appear either.
 */
export async function loggedLines(work: () => Promise<unknown>): Promise<string[]> {
  const lines: string[] = [];
  const record = (...args: unknown[]) => {
    lines.push(args.map((a) => inspect(a, { depth: 10 })).join(' '));
  };
  const log = logger();
  const spies = [
    ...(['debug', 'info', 'warn', 'error'] as const).map((level) => jest.spyOn(log, level).mockImplementation(record)),
    ...(['log', 'info', 'warn', 'error'] as const).map((level) => jest.spyOn(console, level).mockImplementation(record)),
  ];
  try {
    await work();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return lines;
}
