/** Waiting between retries of a write that lost a race. */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Full jitter: a random wait up to min(cap, base·2^attempt), so racing writers spread out. */
export function backoffMs(attempt: number, baseMs = 15, capMs = 400): number {
  return Math.random() * Math.min(capMs, baseMs * 2 ** attempt);
}
