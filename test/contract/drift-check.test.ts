import { ContractViolationError, checkResponse, findOperation } from '../support/contract';

const json = (extra: Record<string, string> = {}) => new Headers({ 'content-type': 'application/json', ...extra });
const BASE = 'http://127.0.0.1:3000';
const charge = {
  id: 'c01jhx3k6v1f8q2n7c9m4p5r6s7',
  idempotencyKey: 'k',
  amount: 1.5,
  currency: 'USD',
  description: '',
  status: 'SUCCESS',
  createdAt: '2026-01-15T09:30:00.000Z',
  failureReason: null,
  pendingReason: null,
  expiresAt: null,
  authorizedAmount: null,
  refundedAmount: 0,
};

describe('the e2e drift check (test/support/contract.ts)', () => {
  it('finds operations by method and path template', () => {
    expect(findOperation('GET', '/api/v1/agents/charge/c123')?.operation.operationId).toBe('getCharge');
    expect(findOperation('DELETE', '/api/v1/agents/charges')).toBeUndefined();
  });

  it('accepts a documented answer', () => {
    expect(() => checkResponse('POST', `${BASE}/api/v1/agents/charges`, 201, json(), JSON.stringify(charge))).not.toThrow();
    expect(() =>
      checkResponse('POST', `${BASE}/api/v1/agents/charges`, 201, json({ 'idempotent-replayed': 'true' }), JSON.stringify(charge)),
    ).not.toThrow();
    expect(() => checkResponse('GET', `${BASE}/nowhere?x=1`, 404, json(), '{"error":"not found"}')).not.toThrow();
  });

  it('refuses a status the operation does not list', () => {
    expect(() => checkResponse('GET', `${BASE}/api/v1/agents/balance`, 418, json(), '{"error":"x"}')).toThrow(ContractViolationError);
    expect(() => checkResponse('GET', `${BASE}/api/v1/agents/balance`, 500, json(), '{"error":"internal error"}')).toThrow(/status 500/);
  });

  it('refuses a body its schema does not allow: a missing field, an extra field, a string amount', () => {
    const { status: _, ...noStatus } = charge;
    for (const body of [noStatus, { ...charge, extra: 1 }, { ...charge, amount: '1.50' }]) {
      expect(() => checkResponse('POST', `${BASE}/api/v1/agents/charges`, 201, json(), JSON.stringify(body))).toThrow(/body where/);
    }
  });

  it('refuses a response header where the document does not declare it', () => {
    expect(() =>
      checkResponse('GET', `${BASE}/api/v1/agents/balance`, 200, json({ 'retry-after': '1' }), '{"balances":{"USD":1,"USDC":0}}'),
    ).toThrow(/header Retry-After/);
  });

  it('refuses a content type the document does not list', () => {
    expect(() => checkResponse('GET', `${BASE}/health`, 200, new Headers({ 'content-type': 'text/html' }), '<p>ok</p>')).toThrow(
      /content type "text\/html"/,
    );
  });
});
