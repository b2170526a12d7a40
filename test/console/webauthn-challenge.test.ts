/**
 * Stateless WebAuthn challenges (DESIGN §24, use-cases/identity/webauthn-challenge.ts): what opening one
 * refuses — another purpose, another payer or session, past its 5 minutes, a changed bit, another
 * spelling of the same bytes, a mac under another secret — without the table (spending is the
 * e2e tests': test/security/console-challenges.e2e.test.ts).
 */
import { resetForTests } from '../../functions/config';
import { CHALLENGE_TTL_MS, issueChallenge, openChallenge, sessionBinding } from '../../functions/use-cases/identity/webauthn-challenge';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const now = new Date('2026-03-01T10:00:00.000Z');
const gone = { code: 'passkeyChallengeGone' };

describe('WebAuthn challenges', () => {
  it('open with their claims for the purpose, the payer and the session they were made for, until they expire', async () => {
    const session = sessionBinding('a'.repeat(64));
    const challenge = b64(await issueChallenge({ purpose: 'add', userId: 'u1', session, name: 'Laptop', fromAccountKey: true }, now));
    const bound = { userId: 'u1', sessionHash: 'a'.repeat(64) };
    await expect(openChallenge(challenge, 'add', now, bound)).resolves.toMatchObject({
      purpose: 'add',
      userId: 'u1',
      name: 'Laptop',
      fromAccountKey: true,
      expiresAt: now.getTime() + CHALLENGE_TTL_MS,
    });
    const later = new Date(now.getTime() + CHALLENGE_TTL_MS - 1);
    await expect(openChallenge(challenge, 'add', later, bound)).resolves.toBeDefined();
    await expect(openChallenge(challenge, 'add', new Date(now.getTime() + CHALLENGE_TTL_MS), bound)).rejects.toMatchObject(gone);
    await expect(openChallenge(challenge, 'proof', now, bound)).rejects.toMatchObject(gone);
    await expect(openChallenge(challenge, 'add', now, { ...bound, userId: 'u2' })).rejects.toMatchObject(gone);
    await expect(openChallenge(challenge, 'add', now, { ...bound, sessionHash: 'b'.repeat(64) })).rejects.toMatchObject(gone);
  });

  it('refuses a changed bit anywhere, another spelling of the same bytes, and a mac under another secret', async () => {
    const bytes = Buffer.from(await issueChallenge({ purpose: 'login' }, now));
    await expect(openChallenge(bytes.toString('base64url'), 'login', now)).resolves.toBeDefined();
    for (const at of [0, 1, 20, 40, bytes.length - 1]) {
      const changed = Buffer.from(bytes);
      changed[at] = (changed[at] ?? 0) ^ 0x01;
      await expect(openChallenge(changed.toString('base64url'), 'login', now)).rejects.toMatchObject(gone);
    }
    // The last character's spare bits: the same bytes, another string (its digest would differ).
    const spelled = bytes.toString('base64url');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = [...alphabet]
      .map((ch) => spelled.slice(0, -1) + ch)
      .find((s) => s !== spelled && Buffer.from(s, 'base64url').equals(bytes));
    if (twin) await expect(openChallenge(twin, 'login', now)).rejects.toMatchObject(gone);
    for (const junk of ['', 'not base64!', 'A'.repeat(3000)]) await expect(openChallenge(junk, 'login', now)).rejects.toMatchObject(gone);

    const secret = process.env.APPROVAL_SECRET;
    try {
      process.env.APPROVAL_SECRET = 'another-approval-secret-0123456789abcdef';
      resetForTests();
      await expect(openChallenge(bytes.toString('base64url'), 'login', now)).rejects.toMatchObject(gone);
    } finally {
      process.env.APPROVAL_SECRET = secret;
      resetForTests();
    }
  });
});
