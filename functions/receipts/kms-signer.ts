/**
 * Receipts signed by a KMS asymmetric key (ECC_NIST_P256, SIGN_VERIFY): the private key never leaves
 * KMS. `kms:Sign` with `ECDSA_SHA_256` over the signing input's SHA-256 digest (`MessageType:
 * DIGEST`, so the input's size never matters) answers a DER signature, turned into JOSE's raw r‖s
 * (der.ts). `kms:GetPublicKey` answers the public key (SPKI DER), read once per key and container:
 * the current key's for its `kid`, the previous keys' for the published set. Only the functions that
 * sign (the receipt and JWKS routes, the webhook dispatcher) may call either (lib/receipts.ts).
 */
import {
  GetPublicKeyCommand,
  type GetPublicKeyCommandInput,
  type GetPublicKeyCommandOutput,
  type KMSClient,
  SignCommand,
  type SignCommandInput,
  type SignCommandOutput,
} from '@aws-sdk/client-kms';
import { derToJose } from './der';
import { digestOf, type ReceiptKey, type ReceiptSigner, receiptKeyOfSpki } from './keys';

/** The two KMS calls a signer makes, on the SDK's own request and response shapes (a test fakes them). */
export interface KmsSigning {
  sign(input: SignCommandInput): Promise<Pick<SignCommandOutput, 'Signature' | 'KeyId' | 'SigningAlgorithm'>>;
  getPublicKey(input: GetPublicKeyCommandInput): Promise<Pick<GetPublicKeyCommandOutput, 'PublicKey' | 'KeySpec' | 'KeyUsage'>>;
}

/** The SDK client as `KmsSigning`. */
export const sdkKms = (client: KMSClient): KmsSigning => ({
  sign: (input) => client.send(new SignCommand(input)),
  getPublicKey: (input) => client.send(new GetPublicKeyCommand(input)),
});

export function kmsSigner(kms: KmsSigning, opts: { keyId: string; previousKeyIds: readonly string[] }): ReceiptSigner {
  const known = new Map<string, Promise<ReceiptKey>>();
  const keyOf = (keyId: string): Promise<ReceiptKey> => {
    let found = known.get(keyId);
    if (!found) {
      found = kms.getPublicKey({ KeyId: keyId }).then((out) => {
        if (out.KeySpec !== undefined && out.KeySpec !== 'ECC_NIST_P256')
          throw new Error(`receipt key ${keyId} is ${out.KeySpec}, not ECC_NIST_P256`);
        if (out.KeyUsage !== undefined && out.KeyUsage !== 'SIGN_VERIFY') throw new Error(`receipt key ${keyId} is not a SIGN_VERIFY key`);
        if (!out.PublicKey) throw new Error('KMS returned no public key');
        return receiptKeyOfSpki(out.PublicKey);
      });
      // A failed read is asked again next time, not remembered.
      found.catch(() => known.delete(keyId));
      known.set(keyId, found);
    }
    return found;
  };
  return {
    current: () => keyOf(opts.keyId),
    keys: async () => {
      const all = await Promise.all([opts.keyId, ...opts.previousKeyIds].map(keyOf));
      return all.filter((key, i) => all.findIndex((other) => other.kid === key.kid) === i);
    },
    sign: async (signingInput) => {
      const out = await kms.sign({
        KeyId: opts.keyId,
        Message: digestOf(signingInput),
        MessageType: 'DIGEST',
        SigningAlgorithm: 'ECDSA_SHA_256',
      });
      if (!out.Signature) throw new Error('KMS returned no signature');
      return derToJose(out.Signature);
    },
  };
}
