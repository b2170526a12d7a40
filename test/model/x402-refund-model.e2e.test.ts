/**
 * Model-based test of refunds of x402 payments (DESIGN §28) over HTTP against the local stack (real
 * handlers, local SQS, the payout worker and reconciler, the Solana rail on the LiteSVM chain): a
 * seller agent is paid three times by the stock buyer and has earned some USDC by charges; random
 * sequences of refunds (parts, the rest, amounts past what is left), replays of a refund's key (the
 * same body, or another: 422) and withdrawals run against the service and against a model of the
 * agent's balance and each payment's refunded total. After every step the agent's balance, each
 * payment's `refunded` and the ledger audit (the wallets' transfers included) agree with the model;
 * at the end every refund is paid once, to the buyer, and the buyer got exactly what was refunded.
 *
 * Small on purpose (seconds): two seeded runs of 12 steps; rerun a failure with MODEL_SEED=<seed>.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { expectEachPayoutPaidOnce } from '../faults/payout-checks';
import { expectLedgerBalanced } from '../support/audit';
import { solanaWallet } from '../support/payouts';
import { useTestStack } from '../support/stack';
import { type RefundFixture, type RefundSeller, useRefundFixture } from '../support/x402-refunds';

const t = useTestStack(
  { RECONCILE_PENDING_AFTER_SECONDS: '1', RECONCILE_PROCESSING_AFTER_SECONDS: '1' },
  { payouts: { visibilityTimeoutSeconds: 2, reconcileIntervalMs: 200 } },
);
const f = useRefundFixture(t);

/** Micro-USDC of one stock payment ($0.01). */
const PAYMENT = 10_000;
const EARNED = 1_200_000;

interface Model {
  seller: RefundSeller;
  /** The agent's USDC, micro-units. */
  balance: number;
  payments: { id: string; refunded: number }[];
  /** Refunds accepted: their ids and amounts (the buyer's due). */
  refunds: { id: string; amount: number }[];
  /** The last accepted refund's key, body and answer, for replays. */
  last?: { paymentId: string; key: string; body: unknown; text: string };
  log: string[];
}
type Real = RefundFixture;

const usdc = (micro: number) => micro / 1_000_000;

async function check(m: Model): Promise<void> {
  expect(Math.round((await f.usdcBalance(m.seller.key)) * 1_000_000)).toBe(m.balance);
  for (const p of m.payments) expect(await f.payment(m.seller.key, p.id)).toMatchObject({ refunded: usdc(p.refunded) });
  await expectLedgerBalanced();
}

/** A refund of payment `i`: `amount` micro-USDC, or the rest (undefined). */
class Refund implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly i: number,
    readonly amount: number | undefined,
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const p = m.payments[this.i % m.payments.length];
    if (!p) throw new Error('no payment');
    const left = PAYMENT - p.refunded;
    const amount = this.amount ?? left;
    const key = `mr-${randomBytes(6).toString('hex')}`;
    const body = this.amount === undefined ? undefined : { amount: usdc(this.amount) };
    const res = await r.refund(m.seller.key, p.id, { body, idempotencyKey: key });
    const expected = amount <= 0 || amount > left ? 400 : amount > m.balance ? 402 : 202;
    m.log.push(`refund ${expected}`);
    expect(res.status).toBe(expected);
    if (expected === 202) {
      expect(res.body).toMatchObject({ paymentId: p.id, amount: usdc(amount), to: r.payer, status: 'PENDING' });
      m.balance -= amount;
      p.refunded += amount;
      m.refunds.push({ id: res.body.id, amount });
      m.last = { paymentId: p.id, key, body, text: res.text };
    } else {
      expect(res.body.error).toBe(expected === 400 ? 'refund exceeds payment' : 'insufficient balance');
    }
    await check(m);
  }
  toString = () => `Refund(${this.i}, ${this.amount ?? 'rest'})`;
}

/** The last refund's key again: the same body answers the same refund; another body is 422. */
class Replay implements fc.AsyncCommand<Model, Real> {
  constructor(readonly same: boolean) {}
  check = (m: Readonly<Model>) => m.last !== undefined;
  async run(m: Model, r: Real): Promise<void> {
    const last = m.last;
    if (!last) return;
    const body = this.same ? last.body : { amount: 0.000123 };
    const res = await r.refund(m.seller.key, last.paymentId, { body, idempotencyKey: last.key });
    m.log.push(`replay ${this.same ? 'same' : 'other'}`);
    if (this.same) {
      expect(res.status).toBe(202);
      expect(res.text).toBe(last.text);
    } else expect(res.status).toBe(422);
    await check(m);
  }
  toString = () => `Replay(${this.same})`;
}

/** A withdrawal of 1 USDC (debited at once), or refused while another is in flight or the balance is short. */
class Withdraw implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(m: Model, _r: Real): Promise<void> {
    const wallet = solanaWallet();
    t.stack.rails.solana.createTokenAccount(wallet);
    const res = await t.call<{ error?: string }>('POST', '/api/v1/agents/withdraw', {
      headers: { 'x-agent-key': m.seller.key, 'idempotency-key': `mw-${randomBytes(6).toString('hex')}` },
      body: { amount: 1, currency: 'USDC', walletAddress: wallet },
    });
    if (m.balance < 1_000_000) {
      expect(res).toMatchObject({ status: 400 });
    } else if (res.status === 200) {
      m.balance -= 1_000_000;
    } else {
      // One payout per agent and currency in flight.
      expect(res.body.error).toBe('payout already in progress');
    }
    m.log.push(`withdraw ${res.status}`);
    await check(m);
  }
  toString = () => 'Withdraw';
}

const command: fc.Arbitrary<fc.AsyncCommand<Model, Real>> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.nat(2), fc.option(fc.integer({ min: 1, max: 6_000 }), { nil: undefined, freq: 3 }))
      .map(([i, a]) => new Refund(i, a)),
  },
  { weight: 2, arbitrary: fc.boolean().map((same) => new Replay(same)) },
  { weight: 1, arbitrary: fc.constant(new Withdraw()) },
);

const STEPS = 12;
const RUNS = Number(process.env.MODEL_RUNS ?? 2);
const SEED = Number(process.env.MODEL_SEED ?? 20_261_129);

describe('x402 refunds agree with a model of the agent balance and refunded totals', () => {
  it(`over ${RUNS} seeded runs of ${STEPS} steps (seed ${SEED})`, async () => {
    const log: string[] = [];
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: STEPS, maxLength: STEPS }), async (cmds) => {
        const seller = await f.seller({ earned: usdc(EARNED) });
        const payments = [];
        for (let i = 0; i < 3; i++) payments.push({ id: await f.pay(seller), refunded: 0 });
        const model: Model = { seller, balance: EARNED + 3 * PAYMENT, payments, refunds: [], log: [] };
        const payerBefore = f.payerUsdc();
        // Every run starts down the replay paths, then goes where the seed takes it.
        await fc.asyncModelRun(() => ({ model, real: f }), [new Refund(0, 1_000), new Replay(true), new Replay(false), ...cmds]);
        for (const refund of model.refunds) expect((await f.untilFinal(seller.key, refund.id)).status).toBe('COMPLETED');
        // The buyer got exactly what was refunded.
        expect(f.payerUsdc() - payerBefore).toBe(BigInt(model.refunds.reduce((sum, r) => sum + r.amount, 0)));
        log.push(...model.log);
      }),
      // Against a live stack shrinking would replay whole runs: report the failing run instead.
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    // Each refund (and withdrawal) paid once on chain.
    await expectEachPayoutPaidOnce(t);
    await expectLedgerBalanced();
    if (process.env.MODEL_SEED === undefined) {
      for (const path of ['refund 202', 'refund 400', 'replay same', 'replay other']) expect(log).toContain(path);
    }
  });
});
