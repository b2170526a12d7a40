/**
 * A console sign-up (DESIGN §21, docs/console.md) creates the payer, its account key, its first
 * passkey and its session. A failure between them (the table busy, an answer lost, the function
 * ending) must not leave a payer behind with no passkey: an account nobody can sign in to, whose
 * key was never shown. Faults are injected at the service's own DynamoDB client (./inject.ts);
 * the WebAuthn answer is a real `none` attestation made here with a P-256 key, so the library's
 * checks run unchanged.
 */
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import { takeWelcomeKey } from '../../functions/store/identity/console-session.repository';
import { getPasskey } from '../../functions/store/identity/passkey.repository';
import { getUser } from '../../functions/store/identity/user.repository';
import { resolveSession } from '../../functions/use-cases/identity/console-sessions';
import { finishSignUp, type RelyingParty, signUpOptions } from '../../functions/use-cases/identity/passkeys';
import { createTestTable } from '../support/table';
import { crash, inject, throttled, timedOut } from './inject';

beforeAll(async () => {
  await createTestTable();
});

const rp: RelyingParty = { id: 'localhost', origin: 'http://localhost:3000', name: 'Agent Payment Service' };
const b64 = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString('base64url');

/** An authenticator: one P-256 credential, answering a registration ceremony with a `none` attestation. */
function authenticator() {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const credentialId = randomBytes(16);
  const cose = isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x ?? '', 'base64url')],
      [-3, Buffer.from(jwk.y ?? '', 'base64url')],
    ]),
  );
  const length = Buffer.alloc(2);
  length.writeUInt16BE(credentialId.length);
  const authData = Buffer.concat([
    createHash('sha256').update(rp.id).digest(),
    // User present, user verified, attested credential data included.
    Buffer.from([0x45]),
    Buffer.alloc(4),
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
    register(challenge: string): RegistrationResponseJSON {
      const clientData = { type: 'webauthn.create', challenge, origin: rp.origin, crossOrigin: false };
      return {
        id: b64(credentialId),
        rawId: b64(credentialId),
        type: 'public-key',
        clientExtensionResults: {},
        response: {
          clientDataJSON: b64(Buffer.from(JSON.stringify(clientData))),
          attestationObject: b64(attestationObject),
          transports: ['internal'],
        },
      };
    },
  };
}

/** What sign-up writes, counted by item type across the test's table. */
async function payerItems(): Promise<Record<string, number>> {
  const counts: Record<string, number> = { User: 0, UserKey: 0, Passkey: 0, UserPasskey: 0, ConsoleSession: 0 };
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db().send(new ScanCommand({ TableName: config().TABLE_NAME, ExclusiveStartKey: start }));
    for (const item of page.Items ?? []) {
      const type = String(item.type);
      if (type in counts) counts[type] = (counts[type] ?? 0) + 1;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return counts;
}

type Input = Record<string, unknown>;
/** Any transaction that saves a passkey (the sign-up's, after the fix; before it, the second of two). */
const savesPasskey = (input: Input) =>
  ((input.TransactItems as { Put?: { Item?: Input } }[] | undefined) ?? []).some((i) =>
    String(i.Put?.Item?.PK ?? '').startsWith('PASSKEY#'),
  );

let address = 0;
const signUp = async (device: ReturnType<typeof authenticator>) => {
  const now = new Date();
  const from = `198.51.100.${++address}`;
  const options = await signUpOptions(rp, 'Fault', from, now);
  return finishSignUp(rp, device.register(options.challenge), from, now);
};

describe('console sign-up under faults', () => {
  it.each([
    ['the table stays busy past every retry', () => throttled(), 'past-sdk-retries' as const],
    ['the request times out', () => timedOut(), 'past-sdk-retries' as const],
    ['the function dies before saving the passkey', () => crash(), 'past-sdk-retries' as const],
  ])('leaves no payer behind when %s, and the ceremony again signs up one payer', async (_, error, where) => {
    const device = authenticator();
    const before = await payerItems();
    // Every attempt while it lasts: the service's own retries of a busy table see it too.
    const fault = inject({ command: 'TransactWriteItemsCommand', match: savesPasskey, times: 1_000, error, where });
    try {
      await expect(signUp(device)).rejects.toThrow();
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBeGreaterThan(0);
    expect(await payerItems()).toEqual(before);

    // The browser starts the ceremony again (the first challenge was spent): one payer, reachable by its passkey.
    const { cookieValue, session } = await signUp(device);
    const after = await payerItems();
    expect(after).toEqual({
      User: (before.User ?? 0) + 1,
      UserKey: (before.UserKey ?? 0) + 1,
      Passkey: (before.Passkey ?? 0) + 1,
      UserPasskey: (before.UserPasskey ?? 0) + 1,
      ConsoleSession: (before.ConsoleSession ?? 0) + 1,
    });
    expect((await getPasskey(device.id))?.userId).toBe(session.userId);
    expect(await getUser(session.userId)).toBeDefined();
    expect((await resolveSession(cookieValue, new Date()))?.userId).toBe(session.userId);
    expect(await takeWelcomeKey(session.hash)).toMatch(/^uk_live_/);
  });

  it("refuses a registration carrying another payer's credential id (401, not a 500) and writes nothing", async () => {
    const device = authenticator();
    await signUp(device);
    const before = await payerItems();
    // The same credential again: only a crafted or replayed registration has one.
    await expect(signUp(device)).rejects.toMatchObject({ code: 'passkeyNotAccepted' });
    expect(await payerItems()).toEqual(before);
  });
});
