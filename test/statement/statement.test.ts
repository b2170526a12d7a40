/**
 * The statement's pure parts: the backward walk that gives each row its balance after it, the
 * filters, and the ledger audit's check that a payer's entries sum to their balance.
 */
import { statementProblems } from '../../functions/audit/balance-checks';
import { matches, type StatementEntry, walkBackward } from '../../functions/core/statement';

const entry = (over: Partial<StatementEntry>): StatementEntry => ({
  entryId: '01jz0000000000000000000000',
  userId: 'u1',
  createdAt: '2026-11-29T10:00:00.000Z',
  type: 'charge',
  amount: -100,
  currency: 'USD',
  status: 'SUCCESS',
  description: 'Forecast for Lisbon',
  counterparty: { kind: 'agent', id: 'a1', name: 'bot' },
  reference: 'c1',
  agentId: 'a1',
  ...over,
});

describe('walkBackward', () => {
  it('gives the newest row the balance and each older one the newer minus its amount, per currency', () => {
    const running = { USD: 900, USDC: 5_000_000 };
    const rows = [
      entry({ amount: -100 }),
      entry({ amount: 2_000_000, currency: 'USDC', type: 'credit' }),
      entry({ amount: 1000, type: 'credit' }),
      entry({ amount: 3_000_000, currency: 'USDC', type: 'credit' }),
    ];
    expect(walkBackward(rows, running).map((r) => r.balanceAfter)).toEqual([900, 5_000_000, 1000, 3_000_000]);
    expect(running).toEqual({ USD: 0, USDC: 0 });
  });
});

describe('matches', () => {
  it('applies every filter, the date bounds inclusive and the text case-insensitive', () => {
    const e = entry({});
    expect(matches(e, {})).toBe(true);
    expect(matches(e, { q: 'lisbon' })).toBe(true);
    expect(matches(e, { q: 'porto' })).toBe(false);
    expect(matches(e, { type: 'hold' })).toBe(false);
    expect(matches(e, { currency: 'USDC' })).toBe(false);
    expect(matches(e, { agentId: 'a2' })).toBe(false);
    expect(matches(e, { from: e.createdAt, to: e.createdAt })).toBe(true);
    expect(matches(e, { from: '2026-11-29T10:00:00.001Z' })).toBe(false);
  });
});

describe('the audit of statements', () => {
  const user = (userId: string, USD: number, statementFrom: boolean) => ({
    kind: 'user' as const,
    userId,
    balances: { USD, USDC: 0 },
    held: {},
    ...(statementFrom ? { statementFrom: true as const } : {}),
  });
  const row = (userId: string, amount: number) => ({ kind: 'statement' as const, userId, entryId: 'x', currency: 'USD' as const, amount });

  it('holds when a payer’s entries sum to their balance, and names the payer when they do not', () => {
    expect(statementProblems({ users: [user('u1', 50, true)], statements: [row('u1', 100), row('u1', -50)] })).toEqual([]);
    expect(statementProblems({ users: [user('u1', 50, true)], statements: [row('u1', 100)] })).toEqual([
      'user u1 USD: statement entries sum to 1 but the balance is 0.5 — difference 0.5 USD',
    ]);
  });

  it('leaves payers from before the statement alone (their older movements have no entries)', () => {
    expect(statementProblems({ users: [user('u0', 50, false)], statements: [row('u0', -10)] })).toEqual([]);
  });
});
