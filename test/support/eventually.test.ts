import { EventuallyTimeoutError, eventually } from './eventually';

describe('eventually', () => {
  it('returns the value of the first try that passes, retrying throws, undefined and false', async () => {
    const answers: (() => unknown)[] = [
      () => {
        throw new Error('not yet');
      },
      () => undefined,
      () => false,
      () => 0,
    ];
    let tries = 0;
    const value = await eventually('the fourth answer', () => answers[tries++]?.(), { intervalMs: 1 });
    expect([value, tries]).toEqual([0, 4]);
  });

  it("times out naming what it waited for and the last failure's message, kept as cause", async () => {
    const last = new Error('expected 2, got 1');
    const failure = await eventually(
      'two deliveries',
      () => {
        throw last;
      },
      { timeoutMs: 30, intervalMs: 5 },
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EventuallyTimeoutError);
    expect((failure as Error).message).toMatch(
      /^timed out after \d+ ms \(\d+ tries\) waiting for two deliveries; last failure:\nexpected 2, got 1$/,
    );
    expect((failure as Error).cause).toBe(last);
  });

  it('times out showing the last value when the probe kept answering not yet', async () => {
    const failure = await eventually('a batch', async () => undefined, { timeoutMs: 20, intervalMs: 5 }).catch((error: unknown) => error);
    expect((failure as Error).message).toMatch(/waiting for a batch; last value: undefined$/);
  });

  it('tries at least once even with no time given', async () => {
    await expect(eventually('at once', () => 'ok', { timeoutMs: 0 })).resolves.toBe('ok');
  });
});
