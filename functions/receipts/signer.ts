/**
 * The receipt signer (DESIGN §27, docs/receipts.md): what signs, the JWS it makes and the key set it
 * publishes. A receipt is a compact JWS, ES256, header `{alg: "ES256", kid, typ: "receipt+jwt"}`
 * (explicit typing, RFC 8725 §3.11: a receipt is never mistaken for another token this service or
 * its keys might sign), payload exactly core/receipts.ts `ReceiptPayload`. The signature is the last
 * step: the payload is built from the stored record by the service itself, never from input.
 *
 * Two signers, chosen by the configuration: a KMS asymmetric key on AWS (kms-signer.ts; the private
 * key never leaves KMS) and the local EC P-256 key file of `npm start` and the tests
 * (local-signer.ts). Both publish their public keys as JWKs whose `kid` is the key's RFC 7638
 * thumbprint, so a key's id follows from the key and needs no registry of its own.
 */
import { KMSClient } from '@aws-sdk/client-kms';
import type { JWK } from 'jose';
import { config, configSlot, onConfigReset } from '../config';
import type { ReceiptFacts, ReceiptPayload } from '../core/receipts';
import { RECEIPT_ALG, type ReceiptSigner } from './keys';
import { kmsSigner, sdkKms } from './kms-signer';
import { localSigner } from './local-signer';

export { RECEIPT_ALG, type ReceiptKey, type ReceiptSigner } from './keys';
export const RECEIPT_TYP = 'receipt+jwt';

/** A key as published in /.well-known/jwks.json (RFC 7517): only public members, with its use. */
export interface PublishedKey extends JWK {
  kid: string;
  alg: typeof RECEIPT_ALG;
  use: 'sig';
}

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');

/** The receipt of `facts` signed at `now` with `signer`'s current key: a compact JWS. */
export async function signReceipt(signer: ReceiptSigner, facts: ReceiptFacts, now: Date = new Date()): Promise<string> {
  const { kid } = await signer.current();
  const payload: ReceiptPayload = { ...facts, iat: Math.floor(now.getTime() / 1000) };
  const input = `${b64url(JSON.stringify({ alg: RECEIPT_ALG, kid, typ: RECEIPT_TYP }))}.${b64url(JSON.stringify(payload))}`;
  const signature = await signer.sign(Buffer.from(input, 'ascii'));
  return `${input}.${b64url(signature)}`;
}

/** The public key set (RFC 7517 §5), as /.well-known/jwks.json answers it. */
export async function publishedKeys(signer: ReceiptSigner): Promise<{ keys: PublishedKey[] }> {
  const keys = await signer.keys();
  return { keys: keys.map(({ kid, jwk }) => ({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, kid, alg: RECEIPT_ALG, use: 'sig' })) };
}

let kms: KMSClient | undefined;
/** The configured signer, one per configuration (a function never signs with a key it is not given). */
const signers = configSlot<ReceiptSigner>();

/** The signer this function's configuration gives it: the KMS key, else the local key. */
export function receiptSigner(): ReceiptSigner {
  const made = signers.get();
  if (made) return made;
  const cfg = config();
  let signer: ReceiptSigner;
  if (cfg.RECEIPT_KMS_KEY_ID) {
    kms ??= new KMSClient({ region: cfg.AWS_REGION, maxAttempts: 3 });
    signer = kmsSigner(sdkKms(kms), { keyId: cfg.RECEIPT_KMS_KEY_ID, previousKeyIds: cfg.RECEIPT_PREVIOUS_KMS_KEY_IDS ?? [] });
  } else if (cfg.RECEIPT_LOCAL_KEY) {
    signer = localSigner(cfg.RECEIPT_LOCAL_KEY);
  } else {
    throw new Error('neither RECEIPT_KMS_KEY_ID nor RECEIPT_LOCAL_KEY is configured');
  }
  signers.set(signer);
  return signer;
}

onConfigReset(() => {
  kms?.destroy();
  kms = undefined;
});
