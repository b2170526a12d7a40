/**
 * The verified-message gate (functions/x402/facilitator.ts, issue 29 finding 3), with no chain: the
 * hot wallet signs no message the facilitator's `verify` has not passed, whichever path asks
 * (`signatureOf`, the stock scheme's settle), and a refusal by the service's own checks admits
 * nothing. And the fee rule the fee payer's spend metric uses. What passes verify needs the chain's
 * simulation: test/security/x402-*.e2e.test.ts.
 */
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { resetForTests } from '../../functions/config';
import { signingFacilitator } from '../../functions/x402/facilitator';
import { UncheckedMessageError } from '../../functions/x402/verified-gate';
import { exactTransaction, payloadOf, requirementsFor } from './attacker';

const MINT = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const NETWORK = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
const hot = Keypair.generate();
const buyer = Keypair.generate();
const saved = { ...process.env };

beforeAll(() => {
  Object.assign(process.env, {
    USDC_MINT: MINT,
    X402_NETWORK: NETWORK,
    // Never contacted: every refusal below comes before the chain.
    SOLANA_RPC_URL: 'http://127.0.0.1:1',
    SOLANA_HOT_WALLET_ADDRESS: hot.publicKey.toBase58(),
    SOLANA_HOT_WALLET_SECRET: bs58.encode(hot.secretKey),
    X402_PAY_TO: hot.publicKey.toBase58(),
  });
  resetForTests();
});
afterAll(() => {
  process.env = saved;
  resetForTests();
});

/** A stock-shaped payment from `buyer` to the treasury, the fee payer's slot empty. */
function payment(computeUnits = 20_000, microLamports = 1, blockhash = Keypair.generate().publicKey.toBase58(), signers = [buyer]) {
  const treasury = hot.publicKey.toBase58();
  const { base64 } = exactTransaction({
    feePayer: treasury,
    from: buyer.publicKey.toBase58(),
    to: treasury,
    mint: MINT,
    amount: 10_000n,
    computeUnits,
    microLamports,
    memo: 'x402:a01seller',
    blockhash,
    signers,
  });
  return payloadOf(
    base64,
    requirementsFor({ network: NETWORK, mint: MINT, treasury, feePayer: treasury, amount: 10_000n, memo: 'x402:a01seller' }),
  );
}

describe('the verified-message gate', () => {
  it('refuses to sign a transaction verify never passed', async () => {
    const facilitator = await signingFacilitator();
    await expect(facilitator.signatureOf(payment())).rejects.toBeInstanceOf(UncheckedMessageError);
  });

  it("admits nothing the service's own checks refused: verify and settle answer the refusal, nothing is signed", async () => {
    const facilitator = await signingFacilitator();
    const paid = payment();
    const refuse = () => ({ reason: 'invalid_seller_memo', message: 'not this agent' });
    expect(await facilitator.verify(paid, paid.accepted, refuse)).toEqual({
      isValid: false,
      invalidReason: 'invalid_seller_memo',
      invalidMessage: 'not this agent',
      payer: '',
    });
    expect(await facilitator.settle(paid, paid.accepted, refuse)).toMatchObject({
      success: false,
      errorReason: 'invalid_seller_memo',
      transaction: '',
    });
    await expect(facilitator.signatureOf(paid)).rejects.toBeInstanceOf(UncheckedMessageError);
  });

  it('finds a payment by its message hash, which needs no key and ignores the signatures', async () => {
    const facilitator = await signingFacilitator();
    const blockhash = Keypair.generate().publicKey.toBase58();
    const paid = payment(20_000, 1, blockhash);
    const hash = facilitator.messageHash(paid);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    // The same message unsigned: the same payment, the same key.
    expect(facilitator.messageHash(payment(20_000, 1, blockhash, []))).toBe(hash);
    expect(facilitator.messageHash(payment(20_000, 2, blockhash))).not.toBe(hash);
    expect(facilitator.messageHash({ ...paid, payload: { transaction: 'not a transaction' } })).toBeUndefined();
  });
});

describe("what a transaction costs the fee payer (the fee payer's spend metric)", () => {
  it('is 5,000 lamports a signature and ceil(units × price / 10^6) of priority fee', async () => {
    const facilitator = await signingFacilitator();
    // The stock client: 20,000 units at 1 µlamport, two signatures.
    expect(facilitator.feeOf(payment())).toBe(10_001);
    // Issue 29's attacker: 1,400,000 units at 5,000,000 µlamports.
    expect(facilitator.feeOf(payment(1_400_000, 5_000_000))).toBe(7_010_000);
    // At the default caps.
    expect(facilitator.feeOf(payment(200_000, 50_000))).toBe(20_000);
  });
});
