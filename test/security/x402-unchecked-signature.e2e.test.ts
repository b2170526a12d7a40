/**
 * Issue 29, finding 3: the hot wallet signed bytes it had not checked. Settle signed the request's
 * transaction with the hot wallet (to learn the signature it would land under) before anything
 * verified it, kept that signature in the table as the claim's key and asked the RPC about it. A
 * transaction whose fee payer is the hot wallet and whose transfer moves USDC *from* the hot wallet
 * was refused, and its stored signature then landed it: the treasury paid the attacker.
 *
 * The attacker: an enabled agent calling `/x402/verify` and `/x402/settle` with transactions of its
 * own making, then looking for the hot wallet's signature of them in every place it could have
 * gone (the table, which a stream, a backup or a reader of the table sees; the answers; the RPC
 * requests, which the provider's logs hold; the service's log lines), and landing the transaction
 * with whatever it found. The property: the treasury loses nothing on chain, and no hot-wallet
 * signature of a refused transaction exists anywhere.
 */
import { Keypair, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import {
  exactTransaction,
  holdsSignature,
  latestBlockhash,
  loggedLines,
  payloadOf,
  type RecordingRpc,
  requirementsFor,
  startRecordingRpc,
  tableItems,
} from '../x402/attacker';

let rpc: RecordingRpc;
beforeAll(async () => {
  rpc = await startRecordingRpc();
});
// Everything the service sends the chain goes through the recording RPC.
const t = useTestStack(() => [{ SOLANA_RPC_URL: rpc.url }]);
let attacker: { key: string; id: string };
/** The seller memo the service gives this agent (GET /api/v1/agents/x402), when it gives one. */
let memo: string | undefined;
let hot: Keypair;

beforeAll(async () => {
  rpc.pointAt(t.stack.rails.solana.url);
  hot = Keypair.fromSecretKey(bs58.decode(t.stack.rails.solana.hotWallet.secretKey));
  attacker = await t.enabledAgent();
  const settings = await t.call<{ extra?: { memo?: string } }>('GET', '/api/v1/agents/x402', { headers: { 'x-agent-key': attacker.key } });
  memo = settings.body.extra?.memo;
});
afterAll(async () => {
  await rpc?.close();
});
afterEach(async () => {
  await expectLedgerBalanced();
});

/** Asks verify, then settle twice (a retry), with the attacker's key; every answer's text. */
async function askEverything(payload: ReturnType<typeof payloadOf>): Promise<{ texts: string[]; logs: string[] }> {
  const texts: string[] = [];
  const logs = await loggedLines(async () => {
    for (const path of ['/x402/verify', '/x402/settle', '/x402/settle']) {
      const res = await t.call('POST', path, {
        headers: { authorization: `Bearer ${attacker.key}` },
        body: { x402Version: 2, paymentPayload: payload, paymentRequirements: payload.accepted },
      });
      expect(res.status).toBe(200);
      texts.push(res.text);
    }
  });
  return { texts, logs };
}

/** The hot wallet's signature of a transaction's message, as only the hot wallet can make it (ed25519 is deterministic). */
function hotWalletSignature(base64: string): Uint8Array {
  const transaction = VersionedTransaction.deserialize(Buffer.from(base64, 'base64'));
  transaction.sign([hot]);
  return transaction.signatures[0] as Uint8Array;
}

/** Sends the transaction with the hot wallet's signature filled in, as anyone holding that signature can. */
async function land(base64: string, signature: Uint8Array): Promise<void> {
  const transaction = VersionedTransaction.deserialize(Buffer.from(base64, 'base64'));
  transaction.signatures[0] = signature;
  await fetch(t.stack.rails.solana.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'sendTransaction',
      params: [Buffer.from(transaction.serialize()).toString('base64'), { encoding: 'base64', skipPreflight: true }],
    }),
  });
}

describe('the hot wallet signs only bytes that passed every check', () => {
  it("refuses a transaction that moves the hot wallet's own USDC; no hot-wallet signature of it exists anywhere, and the treasury loses nothing", async () => {
    const { solana } = t.stack.rails;
    const thief = Keypair.generate().publicKey.toBase58();
    solana.createTokenAccount(thief);
    const treasury = hot.publicKey.toBase58();
    const treasuryBefore = solana.tokenBalance(treasury);
    const requests = rpc.requests.length;

    // Fee payer: the hot wallet. Transfer: 1 USDC from the hot wallet's token account to the thief's,
    // authorised by the hot wallet. The only signature it needs is the one the facilitator adds.
    const { base64 } = exactTransaction({
      feePayer: treasury,
      from: treasury,
      to: thief,
      mint: solana.mint,
      amount: 1_000_000n,
      computeUnits: 20_000,
      microLamports: 1,
      memo,
      blockhash: await latestBlockhash(solana.url),
      signers: [],
    });
    const requirements = requirementsFor({
      network: solana.network,
      mint: solana.mint,
      treasury,
      feePayer: treasury,
      amount: 1_000_000n,
      memo,
    });
    const { texts, logs } = await askEverything(payloadOf(base64, requirements));
    // The hot wallet as the transfer's authority is the fee payer in an instruction: the service's
    // check refuses it before the scheme's own (`…_fee_payer_transferring_funds`) is reached.
    expect(JSON.parse(texts[0] ?? '')).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_svm_payload_fee_payer_in_instruction',
    });
    for (const text of texts.slice(1)) {
      expect(JSON.parse(text)).toMatchObject({
        success: false,
        errorReason: 'invalid_exact_svm_payload_fee_payer_in_instruction',
        transaction: '',
      });
    }

    // The attacker looks for the hot wallet's signature of its transaction everywhere, and lands it with what it finds.
    const signature = hotWalletSignature(base64);
    const items = await tableItems();
    const sent = rpc.requests.slice(requests);
    const found = {
      table: items.filter((item) => holdsSignature(item, signature)),
      answers: texts.filter((text) => holdsSignature(text, signature)),
      rpc: sent.filter((request) => holdsSignature(request, signature)),
      logs: logs.filter((line) => holdsSignature(line, signature)),
    };
    if (Object.values(found).some((places) => places.length > 0)) await land(base64, signature);

    expect(solana.tokenBalance(treasury)).toBe(treasuryBefore);
    expect(solana.tokenBalance(thief)).toBe(0n);
    expect(found).toEqual({ table: [], answers: [], rpc: [], logs: [] });
  });

  it('refuses a payment whose simulation fails (the buyer holds no USDC) without the hot wallet ever signing it', async () => {
    const { solana } = t.stack.rails;
    const broke = Keypair.generate();
    solana.createTokenAccount(broke.publicKey.toBase58());
    const treasury = hot.publicKey.toBase58();
    const requests = rpc.requests.length;
    const lamportsBefore = solana.lamports(treasury);

    const { base64 } = exactTransaction({
      feePayer: treasury,
      from: broke.publicKey.toBase58(),
      to: treasury,
      mint: solana.mint,
      amount: 10_000n,
      computeUnits: 20_000,
      microLamports: 1,
      memo,
      blockhash: await latestBlockhash(solana.url),
      signers: [broke],
    });
    const requirements = requirementsFor({
      network: solana.network,
      mint: solana.mint,
      treasury,
      feePayer: treasury,
      amount: 10_000n,
      memo,
    });
    const { texts, logs } = await askEverything(payloadOf(base64, requirements));
    expect(JSON.parse(texts[0] ?? '')).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_svm_transaction_simulation_failed' });
    for (const text of texts.slice(1)) expect(JSON.parse(text)).toMatchObject({ success: false, transaction: '' });

    const signature = hotWalletSignature(base64);
    expect({
      table: (await tableItems()).filter((item) => holdsSignature(item, signature)),
      answers: texts.filter((text) => holdsSignature(text, signature)),
      rpc: rpc.requests.slice(requests).filter((request) => holdsSignature(request, signature)),
      logs: logs.filter((line) => holdsSignature(line, signature)),
    }).toEqual({ table: [], answers: [], rpc: [], logs: [] });
    // Nothing was sent: the fee payer paid nothing.
    expect(solana.lamports(treasury)).toBe(lamportsBefore);
  });
});
