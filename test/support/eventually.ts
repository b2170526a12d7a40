/**
 * Waiting for a condition, not for a time: the one polling loop the tests share.
 *
 * `probe` is tried until it passes, and what it returns is handed back. It has not passed yet while
 * it throws (an `expect` that does not hold yet), or returns `undefined` or `false` (a value that
 * is not there yet, a predicate that does not hold yet). When `timeoutMs` runs out the last try's
 * failure is thrown, named: the description, how long and how often it was tried, and the last
 * error's message (kept as `cause`) or the last value, so a timeout says what was still wrong.
 *
 * To prove that something does NOT happen, do not wait here for a while: find the record the
 * service keeps that rules it out (a delivery counter that refuses further attempts, a drained
 * queue, an outbox holding exactly the expected events) and wait for that.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';

export interface EventuallyOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** Pause between tries (default 50 ms). */
  intervalMs?: number;
}

/** Thrown when the probe has not passed within the time given. */
export class EventuallyTimeoutError extends Error {
  override name = 'EventuallyTimeoutError';
}

/** Tries `probe` until it passes (returns something other than undefined/false without throwing); returns its value. */
export async function eventually<T>(
  what: string,
  probe: () => T | Promise<T>,
  options: EventuallyOptions = {},
): Promise<Exclude<T, undefined | false>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 50;
  const started = Date.now();
  let tries = 0;
  let last: { error: unknown } | { value: unknown } = { value: undefined };
  for (;;) {
    tries++;
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>;
      last = { value };
    } catch (error) {
      last = { error };
    }
    const elapsed = Date.now() - started;
    if (elapsed >= timeoutMs) {
      const head = `timed out after ${elapsed} ms (${tries} tries) waiting for ${what}`;
      if ('error' in last) {
        const message = last.error instanceof Error ? last.error.message : inspect(last.error);
        throw new EventuallyTimeoutError(`${head}; last failure:\n${message}`, { cause: last.error });
      }
      throw new EventuallyTimeoutError(`${head}; last value: ${inspect(last.value, { depth: 4 })}`);
    }
    await sleep(Math.min(intervalMs, Math.max(0, timeoutMs - elapsed)));
  }
}
