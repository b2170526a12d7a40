import { type SerializedError, serializeError } from '../../functions/observability/serialize-error';

/** Follows `cause` down the serialized chain. */
function chain(serialized: SerializedError | string): (SerializedError | string)[] {
  const out: (SerializedError | string)[] = [];
  let current: SerializedError | string | undefined = serialized;
  while (current !== undefined) {
    out.push(current);
    current = typeof current === 'string' ? undefined : current.cause;
  }
  return out;
}

describe('serializeError', () => {
  it('keeps a chain of three causes below the logged error, root cause last', () => {
    const root = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const rpc = new Error('rpc request failed', { cause: root });
    const rail = new TypeError('send failed', { cause: rpc });
    const top = new Error('payout attempt failed', { cause: rail });
    const links = chain(serializeError(top));
    expect(links.map((l) => (typeof l === 'string' ? l : [l.name, l.message]))).toEqual([
      ['Error', 'payout attempt failed'],
      ['TypeError', 'send failed'],
      ['Error', 'rpc request failed'],
      ['Error', 'socket hang up'],
    ]);
    expect(links[3]).toMatchObject({ code: 'ECONNRESET', stack: expect.stringContaining('socket hang up') });
  });

  it('stops at a cycle instead of looping forever', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    a.cause = b;
    const links = chain(serializeError(a));
    expect(links.map((l) => (typeof l === 'string' ? l : l.message))).toEqual(['a', 'b', '[circular cause]']);
  });

  it('stops a chain longer than it keeps with a note', () => {
    let error = new Error('root');
    for (let i = 0; i < 50; i++) error = new Error(`wrapper ${i}`, { cause: error });
    const links = chain(serializeError(error));
    expect(links.length).toBeLessThan(12);
    expect(links.at(-1)).toMatch(/more omitted/);
  });

  it('blanks keys and credentials in messages and stacks, and copies no other property', () => {
    const agentKey = 'ag_live_4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi';
    const error = Object.assign(new Error(`refused ${agentKey} with Authorization: Bearer eyJhbGciOi.abc.def`), {
      headers: { 'x-agent-key': agentKey },
      response: { body: 'secret body' },
    });
    const secretCause = new Error(`bad wallet [${Array.from({ length: 64 }, (_, i) => i).join(',')}]`);
    const adminCause = new Error('admin key test-admin-key-0123456789 rejected', { cause: secretCause });
    error.cause = adminCause;
    const text = JSON.stringify(serializeError(error));
    expect(text).not.toContain(agentKey.slice('ag_live_'.length));
    expect(text).not.toContain('eyJhbGciOi');
    expect(text).not.toContain('secret body');
    expect(text).not.toContain('x-agent-key');
    // The configured ADMIN_KEY (test/support/env.ts) is blanked wherever it appears.
    expect(text).not.toContain('test-admin-key-0123456789');
    expect(text).not.toContain('0,1,2,3');
    expect(text).toContain('ag_live_[redacted]');
    expect(Object.keys(serializeError(error) as object).sort()).toEqual(['cause', 'message', 'name', 'stack']);
  });

  it('describes a thrown non-Error without copying its properties', () => {
    expect(serializeError('plain text')).toBe('plain text');
    expect(serializeError(undefined)).toBe('undefined');
    expect(serializeError({ message: 'from a promise', token: 'uk_live_abc' })).toBe('non-Error object: from a promise');
    expect(serializeError({ password: 'x' })).toBe('non-Error object');
  });
});
