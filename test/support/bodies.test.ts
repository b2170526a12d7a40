import { expectBody, schemas } from './bodies';

const reply = (status: number, body: unknown) => ({ status, body, text: JSON.stringify(body) });

describe('expectBody', () => {
  it("returns the body as its schema's output", () => {
    const body = expectBody(reply(200, { balances: { USD: 1.5, USDC: 0 } }), schemas.agentBalanceBody, 200);
    expect(body.balances.USD).toBe(1.5);
  });

  it('throws on another status first, with the answer text', () => {
    expect(() => expectBody(reply(409, { error: 'charge is not pending' }), schemas.chargeBody, 200)).toThrow(
      'expected 200, got 409: {"error":"charge is not pending"}',
    );
  });

  it('throws naming the field a body gets wrong, and a field the contract does not have', () => {
    expect(() => expectBody(reply(200, { balances: { USD: '1.5', USDC: 0 } }), schemas.agentBalanceBody)).toThrow(/balances\.USD/);
    expect(() => expectBody(reply(200, { balances: { USD: 1, USDC: 0 }, extra: 1 }), schemas.agentBalanceBody)).toThrow(/extra/);
  });
});
