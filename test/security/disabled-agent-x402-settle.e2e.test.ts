/**
 * Left after the grant-request claim was fixed: an agent's key is cached in each container for up
 * to `AUTH_CACHE_TTL_MS` (30 s), and `POST /x402/settle` trusted that cache. The operator disables
 * a seller agent, or the agent's key leaks and is rotated, in another container; this one still
 * has the old answer.
 *
 * The attacker is the disabled seller, or whoever holds the rotated-away key: it settles a payment
 * made for its seller memo through the warm container.
 *
 * The property: settle answers 401 `invalid or disabled agent key`, and nothing is signed, sent or
 * credited: the treasury's USDC and the hot wallet's lamports do not move, and the agent's balance
 * stays 0. The agent's current key, enabled, settles the same payment afterwards, once.
 */
import { AGENT_KEY_PREFIX, generateKey, hashKey } from '../../functions/core/keys';
import { moveAgentKey, setAgentEnabled } from '../../functions/store/identity/agent.repository';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { useFacilitatorFixture } from '../support/x402';

// The default cache: an agent key stays warm for 30 s.
const t = useTestStack();
const x402 = useFacilitatorFixture(t);
auditAfterAll();

const refused = { status: 401, body: { error: 'invalid or disabled agent key' } };

/** An enabled seller whose key this container has cached (its settings read), and a payment made for it. */
async function sellerWithPayment() {
  const seller = await x402.seller();
  const required = x402.requirements(seller.memo);
  const paid = await x402.payment(required);
  expect(await x402.usdcBalance(seller)).toBe(0);
  return { seller, required, paid };
}

/** Settles as `key` and expects the refusal with nothing moved on chain. */
async function expectRefusedSettle(key: string, paid: unknown, required: unknown) {
  const { solana } = t.stack.rails;
  const tokensBefore = solana.tokenBalance(x402.treasury);
  const lamportsBefore = solana.lamports(x402.treasury);
  for (const auth of ['x-agent-key', 'bearer'] as const) {
    const res = await x402.ask('/x402/settle', { key }, paid, required, auth);
    expect([res.status, res.body]).toEqual([refused.status, refused.body]);
  }
  expect(solana.tokenBalance(x402.treasury)).toBe(tokensBefore);
  expect(solana.lamports(x402.treasury)).toBe(lamportsBefore);
}

describe('x402 settle checks the seller agent itself, not the auth cache', () => {
  it('refuses a disabled seller whose key this container still has cached: nothing signed, sent or credited; enabled again, it settles once', async () => {
    const { seller, required, paid } = await sellerWithPayment();
    // Disabled in another container: this one's cache is not told.
    expect(await setAgentEnabled(seller.id, false)).toBeDefined();

    await expectRefusedSettle(seller.key, paid, required);

    await setAgentEnabled(seller.id, true);
    // The refusal made this container forget the key; its fresh lookup cached "disabled", for 1 s.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await x402.usdcBalance(seller)).toBe(0);
    const settled = await x402.ask('/x402/settle', seller, paid, required);
    expect([settled.status, settled.body.success]).toEqual([200, true]);
    expect(await x402.usdcBalance(seller)).toBeCloseTo(0.01, 6);
  });

  it('refuses the rotated-away key this container still has cached; the new key settles the payment', async () => {
    const { seller, required, paid } = await sellerWithPayment();
    // The seller's key leaked and was rotated in another container.
    const newKey = generateKey(AGENT_KEY_PREFIX);
    expect(await moveAgentKey(hashKey(seller.key), hashKey(newKey), new Date())).toBeDefined();

    await expectRefusedSettle(seller.key, paid, required);

    const current = { key: newKey };
    expect(await x402.usdcBalance(current)).toBe(0);
    const settled = await x402.ask('/x402/settle', current, paid, required);
    expect([settled.status, settled.body.success]).toEqual([200, true]);
    expect(await x402.usdcBalance(current)).toBeCloseTo(0.01, 6);
  });
});
