/**
 * A console session is valid only while what opened it is (DESIGN §24, docs/console.md "Sessions
 * and what opened them"), against DynamoDB Local, at the races the e2e attack cannot time: a
 * sign-in whose key is rotated before its session is written, a passkey removed between the
 * assertion's check and the session's write, a passkey added while a rotation replaces the key
 * that proved it, a state-changing request from a session whose opener went meanwhile, and a
 * session stored before sessions recorded their opener.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { PasskeyGoneError, UserKeyRevokedError } from '../../functions/core/errors';
import { hashKey } from '../../functions/core/keys';
import { db } from '../../functions/store/client';
import { deletePasskey, type Passkey, passkeyUseItem, savePasskey } from '../../functions/store/identity/passkey.repository';
import { accountKeyCheck } from '../../functions/store/identity/user.repository';
import { keys } from '../../functions/store/table';
import { named } from '../../functions/store/transact';
import { rotateAccountKey } from '../../functions/use-cases/identity/account-key';
import { confirmSession, resolveSession, SESSION_ABSOLUTE_MS, startSession } from '../../functions/use-cases/identity/console-sessions';
import { consolePagesEnv, newPayer } from './pages/support';

consolePagesEnv();

const passkeyOf = (userId: string, credentialId: string): Passkey => ({
  credentialId,
  userId,
  publicKey: 'AAAA',
  counter: 0,
  transports: [],
  createdAt: new Date().toISOString(),
  name: credentialId,
  addedBy: { kind: 'accountKey' },
  fromAccountKey: true,
});

describe('a session and what opened it', () => {
  it('a key-opened session is written only while the key is the payer’s, and acts only while it still is', async () => {
    const payer = await newPayer();
    const keyHash = hashKey(payer.userKey);
    const live = await startSession(payer.userId, new Date(), { openedBy: { kind: 'accountKey', keyHash } });
    expect(await confirmSession(live.session)).toBe(true);
    await rotateAccountKey(payer.userId, keyHash);
    // The rotation ended it; a sign-in that looked the old key up just before writes nothing now.
    expect(await resolveSession(live.cookieValue, new Date())).toBeUndefined();
    await expect(startSession(payer.userId, new Date(), { openedBy: { kind: 'accountKey', keyHash } })).rejects.toBeInstanceOf(
      UserKeyRevokedError,
    );
    // A session the rotation's sweep missed (written by hand here) is refused, and ended, by the next POST's check.
    const missed = { hash: 'f'.repeat(64), userId: payer.userId, openedBy: { kind: 'accountKey' as const, keyHash } };
    await db().send(
      new PutCommand({
        TableName: config().TABLE_NAME,
        Item: { ...keys.consoleSession(missed.hash), userId: payer.userId, csrfToken: 'x', openedBy: missed.openedBy },
      }),
    );
    expect(await confirmSession(missed)).toBe(false);
  });

  it('a passkey sign-in writes its session with the counter moved on: a passkey removed meanwhile leaves none', async () => {
    const payer = await newPayer();
    const passkey = passkeyOf(payer.userId, `cred-${Date.now()}`);
    await savePasskey(passkey);
    const opened = await startSession(payer.userId, new Date(), {
      openedBy: { kind: 'passkey', credentialId: passkey.credentialId },
      also: [passkeyUseItem(passkey, 1, new Date())],
    });
    expect(await confirmSession(opened.session)).toBe(true);
    await deletePasskey(payer.userId, passkey.credentialId);
    expect(await confirmSession(opened.session)).toBe(false);
    await expect(
      startSession(payer.userId, new Date(), {
        openedBy: { kind: 'passkey', credentialId: passkey.credentialId },
        also: [passkeyUseItem({ ...passkey, counter: 1 }, 2, new Date())],
      }),
    ).rejects.toBeInstanceOf(PasskeyGoneError);
  });

  it('a passkey added with the account key is saved only while that key is the payer’s', async () => {
    const payer = await newPayer();
    const keyHash = hashKey(payer.userKey);
    await rotateAccountKey(payer.userId, keyHash);
    const late = passkeyOf(payer.userId, `late-${Date.now()}`);
    const proof = named(accountKeyCheck(payer.userId, keyHash), { onConditionFailed: () => new UserKeyRevokedError() });
    await expect(savePasskey(late, [proof])).rejects.toBeInstanceOf(UserKeyRevokedError);
  });

  it('a session stored before sessions recorded what opened them is not valid', async () => {
    const payer = await newPayer();
    const value = 'A'.repeat(43);
    const now = Date.now();
    await db().send(
      new PutCommand({
        TableName: config().TABLE_NAME,
        Item: {
          ...keys.consoleSession(hashKey(value)),
          type: 'ConsoleSession',
          userId: payer.userId,
          csrfToken: 'c'.repeat(43),
          createdAt: now,
          touchedAt: now,
          endsAt: now + SESSION_ABSOLUTE_MS,
        },
      }),
    );
    expect(await resolveSession(value, new Date(now + 1_000))).toBeUndefined();
  });
});
