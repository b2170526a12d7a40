import { LosslessNumber, parse } from 'lossless-json';
import type { ApiRequest } from '../../functions/contracts/api';
import { createChargeSchema, listChargesQuerySchema, policySchema, registerAgentSchema } from '../../functions/contracts/request.schemas';
import { describeProblems, validate } from '../../functions/contracts/validation';
import { parseJsonBody } from '../../functions/http/body';
import { isRefusal, type Refusal, refuse } from '../../functions/messages/refusal';

const req = (body: string | undefined): ApiRequest => ({
  method: 'POST',
  path: '/',
  headers: {},
  query: {},
  params: {},
  body,
  requestId: 'r',
});

const message = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    if (isRefusal(error) && error.statusCode === 400) return error.message;
    throw error;
  }
  throw new Error('expected a 400 refusal');
};

describe('request validation', () => {
  it('reads the amount from its literal text into minor units', () => {
    const body = parseJsonBody(req('{"amount":1.50,"currency":"USD"}'), createChargeSchema);
    expect(body).toEqual({ amount: 150, currency: 'USD', description: '', capture: true });
  });

  it.each([
    ['{"amount":"1.50","currency":"USD"}', 'amount must be a number'],
    ['{"currency":"USD"}', 'amount is required'],
    ['{"amount":1,"currency":"EUR"}', 'currency must be one of USD, USDC'],
    ['{"amount":1}', 'currency is required'],
    ['{"amount":1,"currency":"USD","ammount":2}', 'unknown field: ammount'],
    // A misspelt required field is named as sent, and the field it should have been beside it.
    ['{"amont":1.50,"currency":"USD"}', 'unknown field: amont; amount is required'],
    ['{"amont":1,"curency":"USD"}', 'unknown field: amont, curency; amount is required; currency is required'],
    // An unknown field comes before any other refusal: the caller may have meant it for the refused one.
    ['{"amount":1,"currency":"EUR","x":1}', 'unknown field: x'],
    ['{"amount":1,"currency":"USD","description":5}', 'description must be a string'],
    [`{"amount":1,"currency":"USD","description":"${'x'.repeat(256)}"}`, 'description must be at most 255 characters'],
  ])('charge body %s → %s', (body, expected) => {
    expect(message(() => parseJsonBody(req(body), createChargeSchema))).toBe(expected);
  });

  it('counts description length in characters, not UTF-16 units', () => {
    expect(
      parseJsonBody(req(JSON.stringify({ amount: 1, currency: 'USD', description: '😀'.repeat(255) })), createChargeSchema).description,
    ).toHaveLength(510);
  });

  it.each(['', 'nope', '[1,2]', '"text"', '12', 'null', '{"a":1', '{"a":1}{"b":2}'])('body %j is invalid json body', (body) => {
    expect(message(() => parseJsonBody(req(body), createChargeSchema))).toBe('invalid json body');
  });

  it('refuses bodies over 16 KB with 413', () => {
    const big = JSON.stringify({ amount: 1, currency: 'USD', description: 'x'.repeat(17_000) });
    expect(() => parseJsonBody(req(big), createChargeSchema)).toThrow('request body too large');
  });

  it.each([
    [{ email: 'a@b.co', website: 'https://a.co' }, 'name is required'],
    [{ name: '  ', email: 'a@b.co', website: 'https://a.co' }, 'name must not be empty'],
    [{ name: 'x', email: 'nope', website: 'https://a.co' }, 'email must be a valid email address'],
    [{ name: 'x', email: 'a@b.co', website: 'ftp://a.co' }, 'website must be a valid http(s) URL'],
    [{ name: 'x', email: 'a@b.co', website: 'javascript:alert(1)' }, 'website must be a valid http(s) URL'],
    [{ name: 'a\u0000b', email: 'a@b.co', website: 'https://a.co' }, 'name must not contain invisible or control characters'],
    [{ name: 'x'.repeat(101), email: 'a@b.co', website: 'https://a.co' }, 'name must be at most 100 characters'],
  ])('register body %j → %s', (body, expected) => {
    expect(message(() => validate(registerAgentSchema, body))).toBe(expected);
  });

  it('trims the agent name', () => {
    expect(validate(registerAgentSchema, { name: ' bot ', email: 'a@b.co', website: 'https://a.co' }).name).toBe('bot');
  });

  it.each([
    // No limit default here: a cursor carries its own (the use case applies 20 when neither says).
    [{}, { page: 1 }],
    [
      { page: '3', limit: '100' },
      { page: 3, limit: 100 },
    ],
  ])('list query %j → %j', (query, expected) => {
    expect(validate(listChargesQuerySchema, query)).toEqual(expected);
  });

  it.each([
    [{ page: '0' }, 'page must be a positive integer'],
    [{ page: '-1' }, 'page must be a positive integer'],
    [{ page: '1.5' }, 'page must be a positive integer'],
    [{ page: 'abc' }, 'page must be a positive integer'],
    [{ limit: '101' }, 'limit must be at most 100'],
    [{ limit: '0' }, 'limit must be a positive integer'],
    [{ sort: 'asc' }, 'unknown field: sort'],
  ])('list query %j → %s', (query, expected) => {
    expect(message(() => validate(listChargesQuerySchema, query))).toBe(expected);
  });

  const refusalOf = (fn: () => unknown): Refusal => {
    try {
      fn();
    } catch (error) {
      if (isRefusal(error)) return error;
      throw error;
    }
    throw new Error('expected a refusal');
  };

  it("keeps a refused input's problems as data, which word the text and can be worded with other labels and units", () => {
    const refused = refusalOf(() => validate(policySchema, { approvalWindowSeconds: new LosslessNumber('30') }));
    expect(refused.problems).toEqual([
      { field: 'approvalWindowSeconds', kind: 'atLeast', bound: 60, words: 'must be at least 60', separator: ' ' },
    ]);
    expect(describeProblems(refused.problems)).toBe(refused.message);
    const minutes = { label: () => 'Window (minutes)', bound: (_field: string, seconds: number) => seconds / 60 };
    expect(describeProblems(refused.problems, minutes)).toBe('Window (minutes) must be at least 1');
  });

  it('words unknown and missing fields from their problems, with labels where given', () => {
    const refused = refusalOf(() => parseJsonBody(req('{"amont":1,"curency":"USD"}'), createChargeSchema));
    expect(refused.problems.map((p) => [p.field, p.kind])).toEqual([
      ['amount', 'required'],
      ['currency', 'required'],
      ['amont', 'unknown'],
      ['curency', 'unknown'],
    ]);
    const labels: Record<string, string> = { amount: 'Amount', currency: 'Currency' };
    expect(describeProblems(refused.problems, { label: (f) => labels[f] })).toBe(
      'unknown field: amont, curency; Amount is required; Currency is required',
    );
  });

  it('names the field of a refusal about one field as data, and none for others', () => {
    expect(refuse('grantAgentNotFound').problems).toEqual([{ field: 'agentId', kind: 'other', words: 'agent not found', separator: ': ' }]);
    expect(describeProblems(refuse('webhookUrlTooLong', 2048).problems, { label: () => 'Endpoint URL' })).toBe(
      'Endpoint URL must be at most 2048 characters',
    );
    expect(refuse('insufficientBalance').problems).toEqual([]);
  });

  it('lossless parse keeps digits a float would lose', () => {
    expect(String((parse('{"a":1.0000000000000001}') as { a: unknown }).a)).toBe('1.0000000000000001');
  });
});
