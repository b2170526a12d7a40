/**
 * Receipts signed by a local EC P-256 key (PKCS#8 PEM, RECEIPT_LOCAL_KEY): `npm start` makes it once
 * under .data/ (bin/local/stack.ts) as it does the other local secrets; tests make their own. Node
 * signs with `dsaEncoding: 'ieee-p1363'`, which is JOSE's raw r‖s already.
 */
import { createPrivateKey, createPublicKey, type KeyObject, sign } from 'node:crypto';
import { type ReceiptKey, type ReceiptSigner, receiptKeyOfSpki } from './keys';

export function localSigner(pem: string): ReceiptSigner {
  const key: KeyObject = createPrivateKey(pem);
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error('RECEIPT_LOCAL_KEY must be an EC P-256 private key');
  }
  let published: Promise<ReceiptKey> | undefined;
  const current = () => {
    published ??= receiptKeyOfSpki(createPublicKey(key).export({ format: 'der', type: 'spki' }));
    return published;
  };
  return {
    current,
    keys: async () => [await current()],
    sign: async (signingInput) => sign('sha256', signingInput, { key, dsaEncoding: 'ieee-p1363' }),
  };
}
