/**
 * Pinned transactions (test/store/*-transaction.int.test.ts): every TransactWriteItems a use case
 * sends, captured at the client in the document client's form, and normalised so a run compares
 * with the golden file recorded before a refactor of how the items are built.
 */
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
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
