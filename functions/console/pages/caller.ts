/**
 * The caller a console session stands for, as an operation's `payer` credentials give it
 * (functions/operations/execute.ts `runFor`): the payer, and the account key that opened the
 * session. A form that acts with the account key (a grant, a rotation) finds the acting key with
 * use-cases/identity/console-forms.ts `actingAccountKeyHash`; the others act on the payer alone, so a
 * passkey-opened session (no key hash) stands for its payer with an empty one.
 */
import type { ConsoleSession } from '../page';

export const payerOf = (session: ConsoleSession): { userId: string; userKeyHash: string } => ({
  userId: session.userId,
  userKeyHash: session.accountKeyHash ?? '',
});
