/**
 * Pinned transactions (test/store/*-transaction.int.test.ts): every TransactWriteItems a use case
 * sends, captured at the client in the document client's form, and normalised so a run compares
 * with the golden file recorded before a refactor of how the items are built.
 */
import { config } from '../../functions/config';
import { newGrant } from '../../functions/core/grants';
import { newGrantId, newUserId } from '../../functions/core/ids';
import type { Currency } from '../../functions/core/money';
import type { SpendingPolicy } from '../../functions/core/policy';
import { db } from '../../functions/store/client';
import type { GrantKeyTerms } from '../../functions/store/identity/credentials.repository';
import { createGrant } from '../../functions/store/identity/grant.repository';
import { createUser, creditUser, replacePolicy } from '../../functions/store/identity/user.repository';
import type { TransactItem } from '../../functions/store/transact';
import { plainTransactItem } from './transact-items';

/**
 * Records every TransactWriteItems the client sends (add once per test file, after the table
 * exists): `take()` returns those sent since the last take.
 */
export function recordTransactions(name: string): { take(): TransactItem[][] } {
  let sent: TransactItem[][] = [];
  db().middlewareStack.add(
    (next, context) => async (args) => {
      if (/TransactWrite/.test(context.commandName ?? '')) {
        sent.push(structuredClone((args.input as { TransactItems: TransactItem[] }).TransactItems).map(plainTransactItem));
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return {
    take() {
      const out = sent;
      sent = [];
      return out;
    },
  };
}

const ULID = '[0-9a-hjkmnp-tv-z]{26}';

/**
 * What varies from run to run, as placeholders. Each ULID (every id is a prefix and one or two of
 * them: core/ids.ts) is numbered by first appearance, so an id two items share stays shared; the
 * shards (random for the balance, derived from the id for the charge partition and the expiry
 * queue) and the table's name are not the items' meaning.
 */
export function normalised(transactions: unknown): unknown {
  const ids = new Map<string, string>();
  const id = (ulid: string) => {
    if (!ids.has(ulid)) ids.set(ulid, `<id${ids.size + 1}>`);
    return ids.get(ulid) as string;
  };
  const text = JSON.stringify(transactions)
    .replaceAll(config().TABLE_NAME, '<table>')
    // The idempotency record's fingerprint (a SHA-256 of the request, which holds the ids).
    .replace(/(?<![0-9a-z])[0-9a-f]{64}(?![0-9a-z])/g, '<sha256>')
    .replace(
      new RegExp(`(?<![0-9a-z_])(c|xp)(${ULID})a(${ULID})(?![0-9a-z])`, 'g'),
      (_, kind: string, c: string, a: string) => `${kind}${id(c)}a${id(a)}`,
    )
    .replace(new RegExp(`(?<![0-9a-z_])(a|u|g|evt_)(${ULID})(?![0-9a-z])`, 'g'), (_, kind: string, u: string) => `${kind}${id(u)}`)
    // A bare ULID as a whole value: a statement entry's sort key (store/statement/statement-items.ts).
    .replace(new RegExp(`"(${ULID})"`, 'g'), (_, u: string) => `"${id(u)}"`)
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, '<time>')
    .replace(/\d{4}-\d{2}-\d{2}/g, '<day>')
    .replace(/\d{4}-\d{2}(?=[\\"])/g, '<month>')
    .replace(/((?:AGENTBAL|CHARGES)#[^"#]+#)\d+/g, '$1<shard>')
    .replace(/PENDING_EXPIRY#\d+/g, 'PENDING_EXPIRY#<shard>')
    .replace(/([:,[])1\d{9}(?=[,}\]])/g, '$1"<epoch>"');
  const left = text.match(new RegExp(`(?<![0-9A-Za-z_])[a-z]{0,2}${ULID}`, 'g'));
  if (left) throw new Error(`an id the normalisation missed: ${left[0]}`);
  return JSON.parse(text);
}

/** A payer written straight to the table, funded and under `policy` (its transactions are not the pinned ones). */
export async function seedPayer(balances: Partial<Record<Currency, number>>, policy?: SpendingPolicy): Promise<string> {
  const id = newUserId();
  const now = new Date();
  await createUser(id, `hash-${id}`, now);
  for (const [currency, amount] of Object.entries(balances) as [Currency, number][]) {
    await creditUser(
      id,
      { USD: 0, USDC: 0 },
      amount,
      currency,
      { scope: 'admin#credits', key: `seed-${id}-${currency}`, record: { fingerprint: 'f', statusCode: 200, body: '{}' } },
      now,
    );
  }
  if (policy) await replacePolicy(id, policy);
  return id;
}

/** A USD grant of `userId` to `agentId`, written straight to the table: the terms its key carries. */
export async function seedGrant(
  userId: string,
  agentId: string,
  terms: { limits: Record<string, number>; approvalAbove?: number },
): Promise<GrantKeyTerms> {
  const now = new Date();
  const grant = newGrant({ id: newGrantId(), userId, agentId, agentName: 'bot' }, { currency: 'USD', ...terms }, now);
  await createGrant(grant, `grant-hash-${grant.id}`, { accountKeyHash: `hash-${userId}`, events: [], now });
  return {
    grantId: grant.id,
    userId,
    agentId,
    currency: 'USD',
    limits: grant.limits,
    ...(grant.approvalAbove !== undefined ? { approvalAbove: grant.approvalAbove } : {}),
    ...(grant.expiresAt !== undefined ? { expiresAt: grant.expiresAt } : {}),
  };
}
