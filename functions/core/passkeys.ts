/**
 * A payer's passkeys as their list shows them (DESIGN §21, §24): the view the console's Security
 * page renders, here so the page reads it without knowing the store (use-cases/identity/passkeys.ts
 * `passkeysOf` returns it; the repository reads its items into these very types).
 */

/** How a passkey was added: at sign-up, with the account key typed again, or confirmed with another passkey. */
export type PasskeyOrigin = { kind: 'signup' } | { kind: 'accountKey' } | { kind: 'passkey'; credentialId: string; name: string };

/** A passkey as its payer's list shows it. */
export interface ListedPasskey {
  credentialId: string;
  createdAt: string;
  name?: string;
  addedBy?: PasskeyOrigin;
  /** Added with the account key: rotating the key removes it. */
  fromAccountKey: boolean;
}

export interface PasskeyList {
  passkeys: ListedPasskey[];
  /** When the payer last signed in with the account key (they have it at hand), if ever. */
  accountKeySignInAt?: string;
}
