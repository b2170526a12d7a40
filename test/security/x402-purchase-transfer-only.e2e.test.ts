/**
 * Attacker: an agent with a grant key, crafting the "seller requirements" of x402 purchases (DESIGN
 * §22) to make the hot wallet sign something other than the one transfer the payer's hold covers:
 * a blockhash and lifetime of its choosing (so the service misjudges when the payment expires and
 * releases the hold while it can still land), a huge amount, payTo or fee payer = the service's own
 * wallets (the hot wallet paying the fee, or paying itself), another mint or network, a giant memo,
 * unknown fields; then the charge routes on its purchase's hold (capture it to itself, release it
 * after the payment left). Property: every purchase's transaction is exactly ONE TransferChecked of
 * the held amount of the USDC mint from the hot wallet's token account to the accepted payTo's, with
 * the compute budget and memo the stock client writes, the seller's facilitator as fee payer, the
 * hot wallet only a read-only signer, the service's own blockhash; everything else is refused before
 * anything is held or signed; and the hot wallet's signer refuses any other message outright.
 */
import { createPublicKey, randomUUID, verify } from 'node:crypto';
import { address, getBase64Encoder, getCompiledTransactionMessageDecoder, getTransactionDecoder } from '@solana/kit';
import { getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { Keypair, PublicKey, SystemProgram, TransactionMessage } from '@solana/web3.js';
import bs58 from 'bs58';
import type { AcceptedRequirements } from '../../functions/core/purchases';
import { checkPurchaseMessage, UncheckedPurchaseError } from '../../functions/x402/purchase-signer';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { type Buyer, usePurchaseFixture } from '../support/x402';

const t = useTestStack();
const x402 = usePurchaseFixture(t);
auditAfterAll();

type Purchase = { id: string; status: string; paymentPayload: { payload: { transaction: string } } | null; error?: string };

/** An agent with a grant key (total 5 USDC) of a payer holding 5 USDC. */
const attacker = () => x402.buyer({ usdc: 5 });
const sellerRequirements = () => x402.requirements();
const buy = (a: Buyer, paymentRequirements: unknown) => x402.buy<Purchase>(a, paymentRequirements);
const balance = (userId: string) => x402.usdcBalance(userId);

const ata = (owner: string, mint: string) =>
  getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(owner), true, TOKEN_PROGRAM_ID).toBase58();

/** The transaction of a purchase's payment, decoded: signers, instructions with their accounts and data. */
function decoded(wire: string) {
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
  const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  if (!('instructions' in message)) throw new Error('not a legacy or v0 message');
  const keys = message.staticAccounts.map(String);
  return {
    tx,
    message,
    keys,
    instructions: message.instructions.map((ix) => ({
      program: keys[ix.programAddressIndex],
      accounts: (ix.accountIndices ?? []).map((i) => keys[i]),
      data: Buffer.from(ix.data ?? new Uint8Array()),
    })),
  };
}

describe('a purchase signs exactly one transfer of the held amount to the accepted payTo', () => {
  it('with a blockhash, a lifetime and extra fields smuggled into extra: the service signs its own blockhash, exactly the transfer', async () => {
    const a = await attacker();
    const { solana } = t.stack.rails;
    const requirements = await sellerRequirements();
    // A blockhash the chain issued long ago (expired) and a lifetime far in the future.
    const fake = bs58.encode(Buffer.alloc(32, 7));
    const res = await buy(a, {
      ...requirements,
      extra: { ...(requirements.extra as object), recentBlockhash: fake, lastValidBlockHeight: '999999999', name: 'USDC', decimals: 0 },
    });
    expect(res.status).toBe(201);
    const hot = solana.hotWallet.publicKey;
    const d = decoded(res.body.paymentPayload?.payload.transaction as string);
    expect(d.message.version).toBe(0);
    expect(d.message.header).toEqual({ numSignerAccounts: 2, numReadonlySignerAccounts: 1, numReadonlyNonSignerAccounts: 4 });
    expect(d.keys[0]).toBe(x402.seller.feePayer);
    expect(d.keys[1]).toBe(hot);
    expect('lifetimeToken' in d.message ? d.message.lifetimeToken : '').not.toBe(fake);
    expect(d.instructions.map((i) => i.program)).toEqual([
      'ComputeBudget111111111111111111111111111111',
      'ComputeBudget111111111111111111111111111111',
      TOKEN_PROGRAM_ID.toBase58(),
      'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr',
    ]);
    const transfer = d.instructions[2];
    expect(transfer?.data[0]).toBe(12); // TransferChecked
    expect(transfer?.data.readBigUInt64LE(1)).toBe(10_000n);
    expect(transfer?.data[9]).toBe(6);
    expect(transfer?.accounts).toEqual([ata(hot, solana.mint), solana.mint, ata(x402.seller.wallet, solana.mint), hot]);
    // The hot wallet's signature is there, and is of exactly this message.
    const signature = d.tx.signatures[address(hot)];
    expect(signature).toBeTruthy();
    // Ed25519 public key as DER: the fixed SPKI prefix, then the 32 bytes.
    const key = createPublicKey({
      key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(bs58.decode(hot))]),
      format: 'der',
      type: 'spki',
    });
    expect(verify(null, Buffer.from(d.tx.messageBytes), key, Buffer.from(signature as Uint8Array))).toBe(true);
    // The fee payer's slot is empty: the hot wallet pays no fee and signs as nothing else.
    expect(d.tx.signatures[address(x402.seller.feePayer)]).toBeNull();
    t.stack.rails.solana.expireBlockhash();
  });

  const refused: [string, (r: Record<string, unknown>, hot: string, deposit: string) => unknown, string][] = [
    [
      'a huge amount',
      (r) => ({ ...r, amount: '18446744073709551615' }),
      'paymentRequirements.amount: must be a positive integer of atomic units',
    ],
    ['more than MAX_AMOUNT', (r) => ({ ...r, amount: '1000000000001' }), 'paymentRequirements.amount: exceeds the maximum amount'],
    ['payTo the hot wallet', (r, hot) => ({ ...r, payTo: hot }), 'pay agents of this service with a charge'],
    ['payTo the deposit wallet', (r, _h, deposit) => ({ ...r, payTo: deposit }), 'pay agents of this service with a charge'],
    [
      'the hot wallet as fee payer',
      (r, hot) => ({ ...r, extra: { feePayer: hot } }),
      'paymentRequirements.extra.feePayer: must not be a key of this service',
    ],
    [
      'the deposit wallet as fee payer',
      (r, _h, deposit) => ({ ...r, extra: { feePayer: deposit } }),
      'paymentRequirements.extra.feePayer: must not be a key of this service',
    ],
    [
      'payTo as its own fee payer',
      (r) => ({ ...r, extra: { feePayer: r.payTo } }),
      'paymentRequirements.extra.feePayer: must not be payTo',
    ],
    [
      'another mint',
      (r) => ({ ...r, asset: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB' }),
      'paymentRequirements.asset: unsupported asset',
    ],
    [
      'another network',
      (r) => ({ ...r, network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' }),
      'paymentRequirements.network: unsupported network',
    ],
    [
      'a memo over 256 bytes',
      (r) => ({ ...r, extra: { ...(r.extra as object), memo: 'x'.repeat(257) } }),
      'paymentRequirements.extra.memo: must be a string of 1 to 256 bytes',
    ],
    ['an unknown top-level field', (r) => ({ ...r, instructions: [] }), 'paymentRequirements.instructions: unknown field'],
  ];
  it.each(refused)('%s → 400, nothing held, nothing signed', async (_name, craft, error) => {
    const a = await attacker();
    const { solana } = t.stack.rails;
    const res = await buy(a, craft(await sellerRequirements(), solana.hotWallet.publicKey, solana.depositWallet));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error });
    expect(await balance(a.user.id)).toBe(5);
    const list = await t.call<{ data: unknown[] }>('GET', '/api/v1/agents/x402/purchases', { headers: { 'x-agent-key': a.agent.key } });
    expect(list.body.data).toEqual([]);
  });

  it("the purchase's hold is no charge of the agent's: capture, release and refund by the charge routes are 404; the payer cannot release a signed one", async () => {
    const a = await attacker();
    const res = await buy(a, await sellerRequirements());
    expect(res.status).toBe(201);
    const chargeId = `c${res.body.id.slice(2)}`;
    for (const action of ['capture', 'release', 'refund']) {
      const r = await t.call('POST', `/api/v1/agents/charge/${chargeId}/${action}`, {
        headers: { 'x-agent-key': a.agent.key, 'idempotency-key': randomUUID() },
      });
      expect(r.status).toBe(404);
    }
    const released = await t.call('POST', `/api/v1/users/me/charges/${res.body.id}/release`, { headers: { 'x-user-key': a.user.key } });
    expect(released.status).toBe(409);
    expect(await balance(a.user.id)).toBe(4.99);
    t.stack.rails.solana.expireBlockhash();
  });
});

describe("the hot wallet's purchase signer", () => {
  const hot = '3rNhY961TCfNjzkfsunGjWvRtMye5M3ZUtZ8Po4A6wHM';
  const mint = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
  const requirements: AcceptedRequirements = {
    scheme: 'exact',
    network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
    asset: mint,
    amount: '10000',
    payTo: 'CcHxdMXTB66UuHwaZGQ4rMBhyxZoKArGYJTYbNiKfKbz',
    maxTimeoutSeconds: 60,
    extra: { feePayer: '2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4' },
  };
  const blockhash = bs58.encode(Buffer.alloc(32, 3));

  it('refuses a message that moves the hot wallet SOL instead', () => {
    const wallet = Keypair.generate().publicKey;
    const bytes = new TransactionMessage({
      payerKey: new PublicKey(requirements.extra.feePayer),
      recentBlockhash: blockhash,
      instructions: [SystemProgram.transfer({ fromPubkey: wallet, toPubkey: new PublicKey(requirements.payTo), lamports: 1_000_000_000 })],
    })
      .compileToV0Message()
      .serialize();
    expect(() => checkPurchaseMessage(bytes, { requirements, hotWallet: wallet.toBase58(), blockhash })).toThrow(UncheckedPurchaseError);
    expect(() => checkPurchaseMessage(new Uint8Array([1, 2, 3]), { requirements, hotWallet: hot, blockhash })).toThrow(
      UncheckedPurchaseError,
    );
  });
});
