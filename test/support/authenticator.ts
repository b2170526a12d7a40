/**
 * A software passkey authenticator for tests that speak to the console over HTTP (no browser): one
 * P-256 credential that answers a registration ceremony with a `none` attestation and an
 * authentication ceremony with a real ES256 assertion, its signature counter moving on each time,
 * so @simplewebauthn/server's checks run unchanged. The browser tests use Chromium's virtual
 * authenticator instead (test/browser/console.ts).
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64 = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString('base64url');

export interface SoftAuthenticator {
  /** The credential id, base64url (what the service stores the passkey under). */
  id: string;
  /** The answer to registration options whose challenge is `challenge`. */
  register(challenge: string): RegistrationResponseJSON;
  /** An assertion for authentication options whose challenge is `challenge`. */
  assert(challenge: string): AuthenticationResponseJSON;
}

/** An authenticator for the relying party `rpId` at `origin` (e.g. `localhost`, `http://localhost:3000`). */
export function softAuthenticator(rpId: string, origin: string): SoftAuthenticator {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const credentialId = randomBytes(16);
  const userHandle = randomBytes(16);
  const rpIdHash = createHash('sha256').update(rpId).digest();
  let counter = 0;
  const counterBytes = () => {
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32BE(counter);
    return bytes;
  };
  const cose = isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x ?? '', 'base64url')],
      [-3, Buffer.from(jwk.y ?? '', 'base64url')],
    ]),
  );
  const clientData = (type: string, challenge: string) => Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  return {
    id: b64(credentialId),
    register(challenge) {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(credentialId.length);
      const authData = Buffer.concat([
        rpIdHash,
        // User present, user verified, attested credential data included.
        Buffer.from([0x45]),
        counterBytes(),
        Buffer.alloc(16),
        length,
        credentialId,
        Buffer.from(cose),
      ]);
      const attestationObject = isoCBOR.encode(
        new Map<string, unknown>([
          ['fmt', 'none'],
          ['attStmt', new Map()],
          ['authData', authData],
        ]) as never,
      );
      return {
        id: b64(credentialId),
        rawId: b64(credentialId),
        type: 'public-key',
        clientExtensionResults: {},
        response: {
          clientDataJSON: b64(clientData('webauthn.create', challenge)),
          attestationObject: b64(attestationObject),
          transports: ['internal'],
        },
      };
    },
    assert(challenge) {
      counter += 1;
      // User present and verified.
      const authData = Buffer.concat([rpIdHash, Buffer.from([0x05]), counterBytes()]);
      const client = clientData('webauthn.get', challenge);
      const signature = sign('sha256', Buffer.concat([authData, createHash('sha256').update(client).digest()]), privateKey as KeyObject);
      return {
        id: b64(credentialId),
        rawId: b64(credentialId),
        type: 'public-key',
        clientExtensionResults: {},
        response: {
          clientDataJSON: b64(client),
          authenticatorData: b64(authData),
          signature: b64(signature),
          userHandle: b64(userHandle),
        },
      };
    },
  };
}
