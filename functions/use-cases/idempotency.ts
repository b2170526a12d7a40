/**
 * Idempotency for money-moving POSTs (docs/idempotency.md), in one helper every money movement
 * calls: `idempotent`. In the spirit of Powertools' `makeIdempotent`, except that the
 * record is not written by the helper in a transaction of its own: the repository writes it
 * inside the money movement's own TransactWriteItems, so no crash can leave a debit without
 * the answer that stands for it. The creations whose answer holds a secret shown once take the key
 * optionally and keep that answer sealed: `creation`.
 */
import { hash } from 'node:crypto';
import { config } from '../config';
import { type ApiRequest, type Rendered, StoredReply } from '../contracts/api';
import { serialize } from '../contracts/json';
import { backoffMs, sleep } from '../core/backoff';
import { ConcurrencyError, IdempotencyRecordExistsError, StaleReadError } from '../core/errors';
import type { AnswerSeal, IdempotencyRecord, IdempotencyWrite, SealContext } from '../core/idempotency';
import { type Refusal, refuse } from '../messages/refusal';
import { getIdempotencyRecord, idempotencyPut } from '../store/idempotency.repository';
import type { NamedItem } from '../store/transact';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const PRINTABLE_ASCII = /^[\x20-\x7e]{1,255}$/;

/** The Idempotency-Key header: required, 1–255 printable ASCII characters. */
export function requireIdempotencyKey(req: Pick<ApiRequest, 'headers'>): string {
  return checkIdempotencyKey(req.headers[IDEMPOTENCY_HEADER]);
}

/**
 * The Idempotency-Key header where it is optional (the creations: docs/idempotency.md "Creations"):
 * absent → undefined (the request runs as it always has); present → the same rule as everywhere.
 */
export function optionalIdempotencyKey(req: Pick<ApiRequest, 'headers'>): string | undefined {
  const key = req.headers[IDEMPOTENCY_HEADER];
  return key === undefined ? undefined : checkIdempotencyKey(key);
}

/** The Idempotency-Key rule for a key from anywhere (a header, an operator's flag). */
export function checkIdempotencyKey(key: string | undefined): string {
  if (key === undefined) throw refuse('missingIdempotencyKey');
  if (!PRINTABLE_ASCII.test(key)) {
    throw refuse('invalidIdempotencyKey');
  }
  return key;
}

/** SHA-256 over a canonical rendering of what makes two requests "the same". */
export function fingerprint(parts: Record<string, string | number>): string {
  const canonical = JSON.stringify(
    Object.keys(parts)
      .sort()
      .map((k) => [k, parts[k]]),
  );
  return hash('sha256', canonical, 'hex');
}

/** An answer an attempt gives (its status and stored text), and the record that stores it for replays. */
interface Answer {
  result: { statusCode: number; rawBody: string };
  record: IdempotencyWrite;
}

export type { Rendered } from '../contracts/api';

export interface IdempotentCommand<T> {
  /** Who and which endpoint the key belongs to, e.g. `<agentId>#charges`. */
  scope: string;
  key: string;
  /** What makes two requests "the same" (amounts in minor units). */
  request: Record<string, string | number>;
  /**
   * Most attempts. A new round follows an expired record (rare) or a StaleReadError: a condition
   * on something read before the write failed because another write committed in between.
   */
  rounds: number;
  /** The answer when every round lost a race: 409 with Retry-After by default. */
  exhausted?: () => Refusal;
  /**
   * How an outcome of the attempt is answered: the use case decides in domain values, this makes
   * the answer that is sent and stored (and replayed byte for byte from the record).
   */
  render(outcome: T): Rendered;
  /** Turns a stored body back into the answer's body (see `Rendered.stored`). */
  restore?: (storedBody: string) => Promise<string>;
  /**
   * The answer holds a secret shown once (a key, a signing secret): the record keeps it sealed
   * (store/answer-seal.ts) until its TTL, and under the key's hash instead of the key, so nothing
   * in the table opens it or asks for it. Past the TTL it is never opened: the key is free again.
   */
  seal?: AnswerSeal;
}

/** The record's key: the Idempotency-Key, or its hash for a sealed answer (the key is part of what opens it). */
const recordKeyOf = (key: string, sealed: boolean) => (sealed ? `sha256:${hash('sha256', key, 'hex')}` : key);

/** When a record written at `now` expires (epoch seconds), as store/idempotency.repository.ts writes its TTL. */
const expiryOf = (now: Date) => Math.floor(now.getTime() / 1000) + config().IDEMPOTENCY_TTL_SECONDS;

/** What one attempt of an idempotent command gets (`idempotent`). */
export interface Step<T> {
  /** The time this attempt runs at (records' TTL and the movement's timestamps). */
  readonly now: Date;
  /**
   * The record that stores this outcome's answer (the command's `render`, serialized once), for the
   * repository to write in the movement's transaction. The edge renders the returned outcome with
   * the same `render`, so what is sent is what a replay sends.
   */
  record(outcome: T): IdempotencyWrite;
  /**
   * The stored answer when this key was already used (a replay, or 422 when the request differs);
   * undefined when it was not. For a refusal decided before any write: a replay must win over it.
   */
  replayIfUsed(): Promise<StoredReply | undefined>;
}

/**
 * Runs a money movement at most once per key. `attempt` reads what it needs, decides, commits
 * through a repository that writes `record(outcome)` in the movement's transaction, and returns its
 * outcome (domain values, never HTTP). The command answers that outcome, or the stored answer of an
 * earlier request with this key (a `StoredReply`, which the edge sends as it is, byte for byte); the
 * outcome's answer is `command.render(outcome)`, the function the operation that runs the use case
 * renders with. The outcomes every movement shares: a used key → the stored answer or 422; a stale
 * read → another round after a jittered wait; conflicts past the store's retries → 409 in progress.
 */
export function idempotent<T>(
  command: IdempotentCommand<T>,
  // An attempt may answer an earlier request's stored answer (`replayIfUsed`) instead of refusing.
  attempt: (step: Step<T>) => Promise<T | StoredReply>,
): Promise<T | StoredReply> {
  return commandRounds(command, (step) =>
    attempt({ now: step.now, record: (outcome) => step.answer(outcome).record, replayIfUsed: step.replayIfUsed }),
  );
}

/** One attempt's context inside the rounds: both forms' parts. */
interface RoundStep<T> {
  readonly now: Date;
  /** The answer to an outcome (the command's `render`, serialized once) and its record. */
  answer(outcome: T): Answer;
  /**
   * The stored answer when this key was already used (a replay, or 422 when the request differs);
   * undefined when it was not. For a refusal decided before any write (e.g. too little balance,
   * perhaps because this very request already moved it): a replay must win over the refusal.
   */
  replayIfUsed(): Promise<StoredReply | undefined>;
}

/**
 * The rounds both forms share: a used key → the stored answer or 422; a stale read → another
 * round after a jittered wait; conflicts past the store's retries → 409 in progress.
 */
async function commandRounds<T, R>(command: IdempotentCommand<T>, attempt: (step: RoundStep<T>) => Promise<R>): Promise<R | StoredReply> {
  const fp = fingerprint(command.request);
  const { seal } = command;
  const recordKey = recordKeyOf(command.key, seal !== undefined);
  const sealContext: SealContext = { scope: command.scope, key: command.key, fingerprint: fp };
  const replayOf = async (record: IdempotencyRecord | undefined, now: Date): Promise<StoredReply | undefined> => {
    const stored = replay(record, fp);
    if (stored === undefined) return undefined;
    let text = stored.rawBody;
    if (seal) {
      const opened = await seal.open(text, sealContext, now);
      // Its window is over (the TTL attribute lags, or was changed): as if there were no record.
      if (opened === undefined) return undefined;
      text = opened;
    }
    if (command.restore) text = await command.restore(text);
    return new StoredReply(stored.statusCode, text);
  };
  for (let round = 0; round < command.rounds; round++) {
    const now = new Date();
    const sealer = seal ? await seal.sealer(sealContext, expiryOf(now)) : undefined;
    const context: RoundStep<T> = {
      now,
      answer: (outcome) => {
        const { statusCode, body, stored } = command.render(outcome);
        const text = serialize(body);
        const kept = stored === undefined ? text : serialize(stored);
        return {
          result: { statusCode, rawBody: text },
          record: { scope: command.scope, key: recordKey, record: { fingerprint: fp, statusCode, body: sealer ? sealer(kept) : kept } },
        };
      },
      replayIfUsed: async () => replayOf(await getIdempotencyRecord(command.scope, recordKey, now), now),
    };
    try {
      return await attempt(context);
    } catch (error) {
      if (error instanceof IdempotencyRecordExistsError) {
        // The record DynamoDB handed back with the failed condition; read it when it did not.
        const at = new Date();
        const answer = await replayOf(error.existing ?? (await getIdempotencyRecord(command.scope, recordKey, at)), at);
        if (answer) return answer;
        continue; // It expired in between: the key is free again.
      }
      if (error instanceof StaleReadError) {
        await sleep(backoffMs(round + 1));
        continue;
      }
      // Conflicts past every retry: most likely a concurrent request with this very key.
      if (error instanceof ConcurrencyError) throw refuse('idempotencyInProgress');
      throw error;
    }
  }
  throw command.exhausted ? command.exhausted() : refuse('idempotencyInProgress');
}

/** What one attempt of a creation gets (`creation`). */
export interface CreationAttempt<T> {
  readonly now: Date;
  /**
   * The idempotency record of this outcome, as the item to add to the creation's transaction
   * (precedence: a replay; see store/transact.ts PRECEDENCE); undefined without an Idempotency-Key.
   */
  record(outcome: T): NamedItem | undefined;
  /** The stored answer when the key was used, for `create` to return instead of refusing; always undefined without a key. */
  replayIfUsed(): Promise<StoredReply | undefined>;
}

/**
 * A creation whose Idempotency-Key is OPTIONAL and whose answer holds a secret shown once:
 * registration, the operator's new user, a grant, a webhook endpoint (docs/idempotency.md
 * "Creations"). Without a key, `create` runs once (no record, nothing sealed, no KMS call). With one
 * it is an idempotent command like a charge: the record joins the creation's own transaction
 * (`record(outcome)`), its answer sealed by `seal`; the same key and request → the first answer
 * (a `StoredReply`, sent with `Idempotent-Replayed: true`), another request → 422. Refusals are not
 * stored: nothing was created, and a retry is judged again. The edge renders an outcome with
 * `command.render`, the function the record stores its answer with.
 */
export async function creation<T>(
  command: Omit<IdempotentCommand<T>, 'key' | 'rounds' | 'seal' | 'restore'> & { key: string | undefined; seal: AnswerSeal },
  create: (step: CreationAttempt<T>) => Promise<T | StoredReply>,
): Promise<T | StoredReply> {
  const { key } = command;
  if (key === undefined) {
    const outcome = await create({ now: new Date(), record: () => undefined, replayIfUsed: async () => undefined });
    if (outcome instanceof StoredReply) throw new Error(`${command.scope}: a stored answer without an Idempotency-Key`);
    return outcome;
  }
  return commandRounds({ ...command, key, rounds: 3 }, async (attempt) => {
    let recorded = false;
    const outcome = await create({
      now: attempt.now,
      record: (created) => {
        recorded = true;
        return idempotencyPut(attempt.answer(created).record, attempt.now);
      },
      replayIfUsed: attempt.replayIfUsed,
    });
    if (outcome instanceof StoredReply) return outcome;
    // A creation that committed without its record would answer a secret no replay could give again.
    if (!recorded) throw new Error(`${command.scope}: created without its idempotency record`);
    return outcome;
  });
}

/** The stored answer (status and stored text), 422 for a different request, undefined for no record. */
function replay(record: IdempotencyRecord | undefined, requestFingerprint: string): { statusCode: number; rawBody: string } | undefined {
  if (!record) return undefined;
  if (record.fingerprint !== requestFingerprint) throw refuse('idempotencyMismatch');
  return { statusCode: record.statusCode, rawBody: record.body };
}
