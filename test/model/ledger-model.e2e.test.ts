/**
 * Model-based test of the money paths over HTTP against the local stack (real handlers, local
 * SQS, the real payout worker and reconciler, the rails' local stand-ins). Random sequences of
 * credits, charges (new keys, replays, the same key with another request), withdrawals that
 * succeed, fail (refund) or wait in flight, spending policies (per-charge, daily and approval
 * limits in one currency, sometimes a blocked agent, often one agent's own daily and/or monthly
 * limits, mostly set while that agent holds money of the user), and approvals (approve, decline,
 * expiry by the sweeper, and the 404/409 answers around them), run against the service and against
 * a small in-memory model of what must happen. The model judges each charge exactly as
 * docs/design.md §11 orders it (403 blocked, 402 spending limit incl. the UTC day's running total
 * and the agent's own day and month, 402 insufficient, 202 PENDING with the amount held, 201) and
 * keeps each user's held money. An agent's own counters count only the charges made while its
 * limits were set (docs/payers.md), so ending an older hold must not lower them: charges aimed at exactly
 * what is left under an agent's limits (or one unit more) catch a counter that is off either way. After every step the
 * user balances, held money and policy, agent balances, the charge and payout lists (statuses,
 * amounts, order) agree with the model, every payout was paid at most once on its rail, and the
 * ledger audit holds.
 *
 * Time: the interval sweeper is off; expiry is `expireDueCharges(<a moment past expiresAt>)` run
 * in-process. A charge approved or declined after its real expiresAt is predicted as 409 `charge
 * expired` (within 2 s of it the step is skipped: either answer is right). Daily totals are the UTC
 * day's: a charge step that sees the UTC day change while it runs accepts either judgement.
 *
 * The charge lifecycle (docs/lifecycle.md) is driven too: holds (`capture: false`, a 60 s or the
 * default hour window, approved first when above the user's threshold), captures of all or part
 * (and refused ones), releases, and refunds of all or part with the 400/402/409 answers, the model
 * keeping what was captured, held and refunded.
 *
 * Grants (docs/grants.md): the payer creates grants (per-charge and total limits, sometimes an
 * approval threshold, often an hourly limit: DESIGN §27, the most per UTC clock hour, like
 * `daily`), the agent charges with the grant key (amounts aimed at what is left under the total or
 * the hour, whichever is less, or at the per-charge limit, or one unit more; above the threshold;
 * in the wrong currency), the payer revokes them. The model judges a grant charge in the service's
 * order (revoked → 401 with nothing kept, then the policy, the grant's limits on the amount alone,
 * the grant's running totals, the payer's item), keeps each grant's `spent` (SUCCESS charges,
 * refunds not given back, and open holds) and its hour's (the same, of the charges made in that UTC
 * hour; a request that sees the hour turn accepts either judgement), and compares them (the hour
 * counter read from the grant item) and the grant's status after every step; a capture of a hold
 * under a revoked grant, or by a blocked agent, is 403.
 *
 * x402 (docs/x402.md): an agent settles a payment the demo payer signed with the stock client
 * scheme on the local devnet-shaped chain: its USDC balance is credited the amount once; the same
 * payload settled again by it answers the first answer byte for byte and credits nothing, by
 * another agent `success:false` (`duplicate_settlement`); the agents' x402 listings are compared
 * after those steps. The audit's x402 and grant checks run after every step with the rest.
 *
 * x402 purchases (docs/x402.md "Buying from x402 sellers"): an agent buys from a seller outside the
 * service (a wallet of its own, the stock `@x402/svm` facilitator with its own fee payer) with a USDC
 * grant's key or its payer's own, judged as a hold is (the same verdicts; 202 above a threshold, which
 * the payer's approve and decline then act on by the purchase's `xp…` id); the seller's facilitator
 * lands a payment (the seller +amount on chain) and the purchase is captured once, by the agent's
 * receipt or the stack's reconciler (the hold becomes the payer's spend, no agent credited); payments
 * never sent are released once the chain passes their blockhash (EXPIRED, the hold back to the payer
 * and the grant); a replay answers the first answer byte for byte. Purchases count in the payer's
 * spend counters, the grant's `spent` and the agent's charge list like any hold; the agent's own
 * capture, release and refund never pick them, and the sweeper never ends one whose payment is signed.
 *
 * The operator and a disabled agent's money (docs/payouts.md "Held payouts", docs/lifecycle.md): a
 * withdrawal whose queue message is lost while the agent is disabled is held (the audit holding),
 * then cancelled (the gross back, the key replaying) or released (paid once although disabled); the
 * operator refunds a charge over the admin route, the agent disabled around it or not, with the
 * agent refund's answers. Withdrawals' fees are modelled over the agent's withdrawals
 * (core/fees.ts `cumulativeFee`: a refunded payout gives its share back).
 *
 * The payer's statement (docs/statement.md): each model user keeps its own list of moves (credits,
 * charges, holds and what came back of them, refunds, purchases); every 10 steps and at the end of
 * each run every payer's statement is read whole and must list exactly those moves, its newest
 * `balanceAfter` the model's balance and each row's difference its amount, from an opening of 0.
 *
 * Bounded: seeded runs of 70 steps plus 14 grant and x402 steps, 5 operator steps and 10 purchase steps generated
 * after them (so the 70 are the sequence the seed gave before grants and x402 and go down the same paths), then
 * a few fixed steps (`tailSteps`), the checks after each step read in parallel. Two runs by default
 * (LEDGER_MODEL_RUNS: three was this test's earlier size, 114 s of CI's CPU-bound run); the two
 * go down every required path and run every kind of command, which the test asserts. A failure
 * names its seed; rerun it with MODEL_SEED=<seed> (and LEDGER_MODEL_RUNS=1).
 */
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ed25519 } from '@noble/curves/ed25519.js';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { Keypair } from '@solana/web3.js';
import { x402Facilitator } from '@x402/core/facilitator';
import type { Network, PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { x402Client } from '@x402/fetch';
import { toFacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import { ExactSvmScheme as ExactSvmFacilitator } from '@x402/svm/exact/facilitator';
import bs58 from 'bs58';
import fc from 'fast-check';
import { formatAuditReport, runLedgerAudit } from '../../functions/audit/ledger-audit';
import { config } from '../../functions/config';
import { cumulativeFee, type FeeBasis, NO_FEE_BASIS } from '../../functions/core/fees';
import { CURRENCIES, type Currency, formatAmount } from '../../functions/core/money';
import { getCharge } from '../../functions/store/charges/charge-read.repository';
import { db } from '../../functions/store/client';
import { getPayout } from '../../functions/store/payouts/payout.repository';
import { keys } from '../../functions/store/table';
import { expireDueCharges } from '../../functions/use-cases/charges/expiry';
import { inject } from '../faults/inject';
import { auditAfterAll } from '../support/audit';
import { eventually } from '../support/eventually';
import type { Reply } from '../support/http';
import { startTestStack, type TestStack } from '../support/stack';
import { createTestTable } from '../support/table';
import { fundSol } from '../x402/stock-seller';

let t: TestStack;
/** An x402 buyer paying from the local chain's demo payer (stock client scheme), and what it pays for. */
let buyer: x402Client;
let x402Accepts: Omit<PaymentRequired['accepts'][number], 'amount'>;

beforeAll(async () => {
  await createTestTable();
  t = await startTestStack(
    { RECONCILE_PENDING_AFTER_SECONDS: '1', RECONCILE_PROCESSING_AFTER_SECONDS: '1' },
    // The sweeper runs only when a step calls it: the model decides when a charge expires.
    { payouts: { visibilityTimeoutSeconds: 2, reconcileIntervalMs: 200 }, sweepIntervalMs: 0 },
  );
  const { solana } = t.stack.rails;
  buyer = new x402Client().register(
    'solana:*',
    new ExactSvmClient(await createKeyPairSignerFromBytes(bs58.decode(solana.demoPayer.secretKey)), { rpcUrl: solana.url }),
  );
  x402Accepts = {
    scheme: 'exact',
    network: solana.network as `${string}:${string}`,
    asset: solana.mint,
    payTo: solana.hotWallet.publicKey,
    maxTimeoutSeconds: 60,
    extra: { feePayer: solana.hotWallet.publicKey },
  };
  // The seller of the purchase steps: a wallet outside the service, settled by the stock facilitator with its own fee payer.
  const feePayerKeys = Keypair.generate();
  const walletKeys = Keypair.generate();
  await fundSol(solana, feePayerKeys.publicKey.toBase58(), 1_000_000_000);
  solana.createTokenAccount(walletKeys.publicKey.toBase58());
  const feePayer = await createKeyPairSignerFromBytes(feePayerKeys.secretKey);
  seller = {
    wallet: walletKeys.publicKey.toBase58(),
    feePayer: feePayer.address,
    facilitator: new x402Facilitator().register(
      solana.network as Network,
      new ExactSvmFacilitator(toFacilitatorSvmSigner(feePayer, { defaultRpcUrl: solana.url })),
    ),
  };
});
afterAll(async () => {
  await t?.stack.stop();
});
auditAfterAll();

type Balances = Record<Currency, number>;
type PayoutStatus = 'PENDING' | 'PROCESSING' | 'HELD' | 'COMPLETED' | 'FAILED';

/** The part of a spending policy the model generates: limits in one currency, maybe a blocked agent. */
interface ModelPolicy {
  currency: Currency;
  perCharge?: number;
  daily?: number;
  approvalAbove?: number;
  approvalWindowSeconds: number;
  /** Index of the blocked agent. */
  blocked?: number;
  /** One agent's own daily and/or monthly limits (its entry in `agents`), on top of the user-wide ones. */
  agentLimits?: AgentLimits;
}
interface AgentLimits {
  /** Index of the agent. */
  agent: number;
  daily?: number;
  monthly?: number;
  /**
   * Generated only: aim the limits at the agent and currency of one of the user's open (PENDING)
   * charges, if it has any, so holds made before an agent limit and ended after it are common.
   */
  aimAtOpenHold?: boolean;
}
interface ModelUser {
  id: string;
  key: string;
  bal: Balances;
  /** Money in this user's PENDING charges. */
  held: Balances;
  policy?: ModelPolicy;
  /** Every movement of the balance, oldest first: what the payer's statement must list (docs/statement.md). */
  moves: Move[];
}
type MoveType = 'credit' | 'charge' | 'hold' | 'hold_release' | 'refund' | 'x402_purchase';
interface Move {
  type: MoveType;
  /** Signed minor units: a debit of the available balance is negative. */
  amount: number;
  currency: Currency;
}
/** Records a movement of the user's balance on the model's statement (the balance itself is kept where it moves). */
const moved = (u: ModelUser, type: MoveType, amount: number, currency: Currency) => void u.moves.push({ type, amount, currency });
type ChargeStatus = 'SUCCESS' | 'FAILED' | 'PENDING' | 'EXPIRED';
interface ModelCharge {
  key: string;
  user: number;
  amount: number;
  currency: Currency;
  description: string;
  status: ChargeStatus;
  /** The first answer, replayed verbatim for the same key and request. */
  statusCode: number;
  text: string;
  /** Set when the charge was made (201/202): its id, UTC day and month and, when PENDING, expiry. */
  id?: string;
  day?: string;
  month?: string;
  /** Its UTC clock hour (`2026-11-29T14`): the period a grant's hourly counter counted it in. */
  hour?: string;
  /**
   * Whether the agent's own counters counted it: the payer's policy gave this agent daily or
   * monthly limits in this currency when it was made (docs/payers.md: an agent limit counts from when it
   * is set). Ending the charge (release, decline, expiry, a partial capture) lowers them only then.
   */
  agentCounted?: boolean;
  expiresAt?: string;
  /** Authorize-then-capture (`capture: false`): `amount` is what is held, then what was captured. */
  hold?: boolean;
  pendingReason?: 'user_approval' | 'capture';
  /** What refunds gave back so far. */
  refunded: number;
  /** The request as sent (replays compare it): the amount asked and the hold terms' JSON. */
  requested: number;
  holdTerms: string;
  /** Made with a grant's key (its index in `grants`): the key a replay sends too. */
  grant?: number;
  /** An x402 purchase (docs/x402.md "Buying from x402 sellers"): a hold ended by the chain, never by the agent. */
  purchase?: ModelPurchase;
}
/** What the model knows of a purchase beyond its hold: the request as sent and the payment the service signed. */
interface ModelPurchase {
  /** The request as sent (a replay sends it again); the charge's `id` in the model is the purchase's public `xp…` id. */
  body: string;
  requirements: Record<string, unknown>;
  /** Once signed: the payment and the last block height its blockhash can land at (read from its record). */
  signed?: { paymentPayload: PaymentPayload; lastValidBlockHeight: number };
}
interface ModelPayout {
  id: string;
  key: string;
  body: string;
  text: string;
  currency: Currency;
  gross: number;
  status: PayoutStatus;
}
interface ModelAgent {
  id: string;
  key: string;
  wallet: string;
  bal: Balances;
  /** Newest last. */
  charges: ModelCharge[];
  payouts: ModelPayout[];
  /** What its payouts not refunded withdrew and paid in fees, per currency (core/fees.ts `cumulativeFee`). */
  fees: Record<Currency, FeeBasis>;
}
/** A grant (docs/grants.md): one payer's delegated key for one agent and one currency. */
interface ModelGrant {
  id: string;
  key: string;
  user: number;
  agent: number;
  currency: Currency;
  perCharge?: number;
  /** `limits.hourly` (DESIGN §27): the most per UTC clock hour, counted like the payer's `daily`. */
  hourly?: number;
  total?: number;
  approvalAbove?: number;
  revoked: boolean;
}
/** An x402 payment an agent settled (docs/x402.md): the signed payload and the first answer. */
interface ModelX402 {
  agent: number;
  amount: number;
  payload: PaymentPayload;
  text: string;
}
interface Model {
  users: ModelUser[];
  agents: ModelAgent[];
  grants: ModelGrant[];
  x402: ModelX402[];
  log: string[];
  /** The hourly limit (USD cents, scaled for USDC) of each grant the run creates, in creation order; undefined: none. */
  hourlies: readonly (number | undefined)[];
}
type Real = TestStack;

const zero = (): Balances => ({ USD: 0, USDC: 0 });
/** Which paths the runs took, so the test can insist the interesting ones happened. */
const seen = new Map<string, number>();
const saw = (path: string) => seen.set(path, (seen.get(path) ?? 0) + 1);
const text = (minor: number, c: Currency) => formatAmount(minor, c);
/** A response's decimal number against the model's minor units, compared as the same JSON literal. */
const asJson = (minor: number, c: Currency) => Number(text(minor, c));
const balancesJson = (b: Balances) => ({ USD: asJson(b.USD, 'USD'), USDC: asJson(b.USDC, 'USDC') });
const solanaWallet = () => bs58.encode(ed25519.getPublicKey(randomBytes(32)));
const utcDay = () => new Date().toISOString().slice(0, 10);
const utcMonth = () => new Date().toISOString().slice(0, 7);
const utcHour = () => new Date().toISOString().slice(0, 13);

/** The policy's JSON (PUT body and the answer it must give back). */
function policyJson(p: ModelPolicy | undefined, agents: readonly ModelAgent[]): Record<string, unknown> {
  if (!p) return {};
  const c = p.currency;
  const limit = (minor: number | undefined) => (minor === undefined ? undefined : { [c]: asJson(minor, c) });
  const out: Record<string, unknown> = {};
  if (p.perCharge !== undefined) out.perCharge = limit(p.perCharge);
  if (p.daily !== undefined) out.daily = limit(p.daily);
  if (p.approvalAbove !== undefined) out.approvalAbove = limit(p.approvalAbove);
  out.approvalWindowSeconds = p.approvalWindowSeconds;
  const entries: Record<string, Record<string, unknown>> = {};
  const entry = (agent: number) => {
    const id = (agents[agent] as ModelAgent).id;
    entries[id] ??= {};
    return entries[id] as Record<string, unknown>;
  };
  if (p.blocked !== undefined) entry(p.blocked).blocked = true;
  if (p.agentLimits) {
    const e = entry(p.agentLimits.agent);
    if (p.agentLimits.daily !== undefined) e.daily = limit(p.agentLimits.daily);
    if (p.agentLimits.monthly !== undefined) e.monthly = limit(p.agentLimits.monthly);
  }
  if (Object.keys(entries).length > 0) out.agents = entries;
  return out;
}

/** Whether the policy keeps this agent's own counters for a charge in `currency` (it has daily/monthly limits in it). */
const agentCounters = (p: ModelPolicy | undefined, agent: number, currency: Currency) =>
  p?.currency === currency && p.agentLimits?.agent === agent && (p.agentLimits.daily !== undefined || p.agentLimits.monthly !== undefined);

/**
 * What a spend counter holds in `currency`: the user's charges made in that UTC day or month,
 * SUCCESS or still PENDING (a captured hold counts what was captured). With `agent`, that agent's
 * counter: only its charges the agent's counters counted.
 */
function spentIn(m: Model, user: number, currency: Currency, period: { day: string } | { month: string }, agent?: number): number {
  let sum = 0;
  m.agents.forEach((a, aIdx) => {
    if (agent !== undefined && aIdx !== agent) return;
    for (const c of a.charges) {
      const inPeriod = 'day' in period ? c.day === period.day : c.month === period.month;
      if (agent !== undefined && !c.agentCounted) continue;
      if (c.user === user && c.currency === currency && inPeriod && (c.status === 'SUCCESS' || c.status === 'PENDING')) sum += c.amount;
    }
  });
  return sum;
}

/** The running totals a charge is judged against; undefined when the UTC day changed while it ran (not predicted). */
interface Spent {
  userDay: number;
  agentDay: number;
  agentMonth: number;
}

type Verdict = 'blocked' | 'limit' | 'insufficient' | 'pending' | 'success' | 'revoked';

/** docs/design.md §11, in its order. `spent` undefined: the running totals are not predicted. */
function judgeCharge(u: ModelUser, agent: number, currency: Currency, amount: number, spent: Spent | undefined): Verdict[] {
  const p = u.policy;
  if (p?.blocked === agent) return ['blocked'];
  const limits = p?.currency === currency ? p : undefined;
  const own = limits?.agentLimits?.agent === agent ? limits.agentLimits : undefined;
  // A limit the amount alone breaks is refused before any running total.
  for (const limit of [limits?.perCharge, limits?.daily, own?.daily, own?.monthly]) {
    if (limit !== undefined && amount > limit) return ['limit'];
  }
  const rest: Verdict[] =
    u.bal[currency] < amount
      ? ['insufficient']
      : limits?.approvalAbove !== undefined && amount > limits.approvalAbove
        ? ['pending']
        : ['success'];
  const totals: [number | undefined, keyof Spent][] = [
    [limits?.daily, 'userDay'],
    [own?.daily, 'agentDay'],
    [own?.monthly, 'agentMonth'],
  ];
  if (totals.every(([limit]) => limit === undefined)) return rest;
  if (spent === undefined) return ['limit', ...rest];
  return totals.some(([limit, which]) => limit !== undefined && spent[which] + amount > limit) ? ['limit'] : rest;
}

/**
 * A charge with a grant key (docs/grants.md), in the service's order: a revoked grant → 401 before
 * anything else, nothing kept (every transaction a grant-key charge writes, a refusal's included,
 * checks the grant item); then the payer's policy (blocked, a limit the amount alone breaks), the
 * grant's limits the amount alone breaks (all kept as FAILED charges), then the one transaction:
 * the grant's running total → 402, then the payer's item as for any charge.
 * The grant's `approvalAbove` sends a charge to approval as the policy's does.
 */
function judgeGrantCharge(
  u: ModelUser,
  g: ModelGrant,
  amount: number,
  spent: Spent | undefined,
  grantSpent: number,
  grantHour: number | undefined,
): Verdict[] {
  if (g.revoked) return ['revoked'];
  const p = u.policy;
  if (p?.blocked === g.agent) return ['blocked'];
  const limits = p?.currency === g.currency ? p : undefined;
  const own = limits?.agentLimits?.agent === g.agent ? limits.agentLimits : undefined;
  for (const limit of [limits?.perCharge, limits?.daily, own?.daily, own?.monthly, g.perCharge, g.hourly, g.total]) {
    if (limit !== undefined && amount > limit) return ['limit'];
  }
  const rest: Verdict[] =
    g.total !== undefined && grantSpent + amount > g.total
      ? ['limit']
      : judgeCharge(u, g.agent, g.currency, amount, spent).map((v) =>
          v === 'success' && g.approvalAbove !== undefined && amount > g.approvalAbove ? 'pending' : v,
        );
  // The grant's UTC hour (like the payer's day): when the hour turned while the request ran, either judgement.
  if (g.hourly === undefined) return rest;
  if (grantHour === undefined) return ['limit', ...rest];
  return grantHour + amount > g.hourly ? ['limit'] : rest;
}

/** What a grant's hourly counter holds for `hour`: its charges counted in that UTC hour, SUCCESS or still PENDING. */
const grantHourSpentOf = (m: Readonly<Model>, grant: number, hour: string) =>
  m.agents
    .flatMap((a) => a.charges)
    .filter((c) => c.grant === grant && c.hour === hour && (c.status === 'SUCCESS' || c.status === 'PENDING'))
    .reduce((sum, c) => sum + c.amount, 0);

/**
 * The hourly running total a grant charge is judged against: undefined (not predicted) when the
 * UTC hour turned while the request ran.
 */
const grantHourFor = (m: Readonly<Model>, grant: number | undefined, hourBefore: string): number | undefined => {
  const hourAfter = utcHour();
  if (grant === undefined || hourAfter !== hourBefore) return undefined;
  return grantHourSpentOf(m, grant, hourAfter);
};

/** Names the paths of a grant charge under an hourly limit: refused by it, or made under it. */
function sawHourly(g: ModelGrant | undefined, verdict: Verdict, amount: number, grantHour: number | undefined, what: string): void {
  if (g?.hourly === undefined || verdict === 'revoked') return;
  if (verdict === 'limit' && (amount > g.hourly || (grantHour !== undefined && grantHour + amount > g.hourly)))
    saw(`${what} 402 hourly limit`);
  if (verdict === 'success' || verdict === 'pending') saw(`${what} made under an hourly limit`);
}

/** What a grant has counted as spent: its SUCCESS charges (refunds do not give back) and open holds. */
const grantSpentOf = (m: Readonly<Model>, grant: number) =>
  m.agents
    .flatMap((a) => a.charges)
    .filter((c) => c.grant === grant && (c.status === 'SUCCESS' || c.status === 'PENDING'))
    .reduce((sum, c) => sum + c.amount, 0);

const VERDICT_STATUS: Record<Verdict, number> = { blocked: 403, limit: 402, insufficient: 402, pending: 202, success: 201, revoked: 401 };
const VERDICT_ERROR: Partial<Record<Verdict, string>> = {
  revoked: 'invalid user key',
  blocked: 'agent blocked by user',
  limit: 'spending limit exceeded',
  insufficient: 'insufficient balance',
};

/** Every charge of the model with its agent, for the approval commands. */
const allCharges = (m: Readonly<Model>) => m.agents.flatMap((a, agent) => a.charges.map((c) => ({ c, agent })));
/** The charges the agent's lifecycle calls (capture, release, refund) act on: a purchase is ended by the chain alone. */
const agentCharges = (m: Readonly<Model>) => allCharges(m).filter(({ c }) => !c.purchase);

function expectStatus(res: Reply, status: number, what: string): void {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${res.text}`);
}

async function payoutStatus(agent: ModelAgent, payoutId: string): Promise<PayoutStatus> {
  const res = await t.call<{ status: PayoutStatus }>('GET', `/api/v1/agents/withdraw?payoutId=${payoutId}`, {
    headers: { 'x-agent-key': agent.key },
  });
  expectStatus(res, 200, 'get payout');
  return res.body.status;
}

/** Waits for the payout to reach one of `want` (the worker, or the reconciler for stragglers). */
function until(agent: ModelAgent, payoutId: string, want: PayoutStatus[]): Promise<PayoutStatus> {
  return eventually(
    `payout ${payoutId} to be ${want.join('/')}`,
    async () => {
      const status = await payoutStatus(agent, payoutId);
      if (!want.includes(status)) throw new Error(`payout ${payoutId} stuck in ${status}, wanted ${want.join('/')}`);
      return status;
    },
    { timeoutMs: 20_000 },
  );
}

// ---- commands -------------------------------------------------------------------------------

class Credit implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly user: number,
    readonly currency: Currency,
    readonly minor: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const u = m.users[this.user % m.users.length] as ModelUser;
    const res = await r.call<{ balances: unknown }>('POST', `/api/v1/admin/users/${u.id}/credits`, {
      headers: { ...r.admin, 'idempotency-key': `cr-${randomBytes(6).toString('hex')}` },
      raw: `{"amount":${text(this.minor, this.currency)},"currency":"${this.currency}"}`,
    });
    expectStatus(res, 200, 'credit');
    u.bal[this.currency] += this.minor;
    moved(u, 'credit', this.minor, this.currency);
    expect(res.body.balances).toEqual(balancesJson(u.bal));
  }
  toString = () => `credit(user ${this.user}, ${this.minor} ${this.currency})`;
}

class Charge implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly agent: number,
    readonly user: number,
    readonly currency: Currency,
    readonly minor: number,
    /** Small key space per agent, so keys collide: same request → replay, other request → 422. */
    readonly keyNo: number,
    readonly descNo: number,
    /**
     * `approval`: just above the user's approval threshold when it has one (in the policy's
     * currency), so PENDING charges, and the approvals after them, are common. `agentLimit`: when
     * the user's policy gives an agent its own limits, a charge by that agent of exactly what is
     * left under them, or one unit more: a counter that counts too little or too much shows at once.
     */
    readonly aim: 'none' | 'approval' | 'agentLimit' = 'none',
    /** Authorize only (`capture: false`), with a 60 s hold (`holdSeconds`) or the default hour. */
    readonly hold: 'no' | 'short' | 'hour' = 'no',
    /**
     * With a grant's key (`pick` of the model's grants): its payer, agent and currency, the amount
     * `aim`ed at exactly what is left under its total, at its perCharge, just above its approval
     * threshold (or one unit more), or in the other currency (400, nothing kept).
     */
    readonly viaGrant?: { pick: number; aim: 'none' | 'total' | 'perCharge' | 'approval' | 'currency' },
  ) {}
  check = (m: Readonly<Model>) => this.viaGrant === undefined || m.grants.length > 0;
  async run(m: Model, r: Real): Promise<void> {
    const gIdx = this.viaGrant ? this.viaGrant.pick % m.grants.length : undefined;
    const g = gIdx === undefined ? undefined : (m.grants[gIdx] as ModelGrant);
    // Aimed at an agent limit: a user whose policy has one, if any does.
    const limited = m.users.flatMap((x, i) => (x.policy?.agentLimits ? [i] : []));
    const uIdx = g
      ? g.user
      : this.aim === 'agentLimit' && limited.length > 0
        ? (limited[this.user % limited.length] as number)
        : this.user % m.users.length;
    const u = m.users[uIdx] as ModelUser;
    const own = this.aim === 'agentLimit' && !g ? u.policy?.agentLimits : undefined;
    const aIdx = g ? g.agent : own ? own.agent : this.agent % m.agents.length;
    const a = m.agents[aIdx] as ModelAgent;
    const isHold = this.hold !== 'no';
    const holdTerms = this.hold === 'short' ? ',"capture":false,"holdSeconds":60' : this.hold === 'hour' ? ',"capture":false' : '';
    const threshold = this.aim === 'approval' && !g ? u.policy?.approvalAbove : undefined;
    let currency = this.currency;
    let minor = this.minor;
    if (g && this.viaGrant) {
      currency = g.currency;
      // The generated amount is in this.currency's units: the same figure in the grant's.
      minor = this.currency === g.currency ? minor : g.currency === 'USDC' ? minor * 10_000 : Math.max(1, Math.round(minor / 10_000));
      const one = this.minor % 2;
      // What is left under the grant's total and its hour (the tighter), so a counter off either way shows.
      const lefts = [
        g.total === undefined ? undefined : g.total - grantSpentOf(m, gIdx as number),
        g.hourly === undefined ? undefined : g.hourly - grantHourSpentOf(m, gIdx as number, utcHour()),
      ].filter((x): x is number => x !== undefined);
      const left = lefts.length === 0 ? undefined : Math.min(...lefts);
      const aim = this.viaGrant.aim;
      if (aim === 'total' && left !== undefined) minor = Math.max(1, left + one);
      else if (aim === 'perCharge' && g.perCharge !== undefined) minor = g.perCharge + one;
      else if (aim === 'approval' && g.approvalAbove !== undefined) minor = g.approvalAbove + 1 + (this.minor % 100);
      else if (aim === 'none') {
        // Within the grant's limits and its approval threshold (when there is room), so its charges mostly succeed.
        const room = Math.min(g.perCharge ?? minor, g.approvalAbove ?? minor, left !== undefined && left > 0 ? left : minor);
        minor = 1 + (minor % Math.max(1, room));
      } else if (aim === 'currency') {
        currency = g.currency === 'USD' ? 'USDC' : 'USD';
        minor = 1 + (this.minor % 100);
      }
    } else if (threshold !== undefined) {
      currency = (u.policy as ModelPolicy).currency;
      minor = threshold + 1 + (this.minor % 1_000);
    } else if (own) {
      currency = (u.policy as ModelPolicy).currency;
      const left = [
        [own.daily, spentIn(m, uIdx, currency, { day: utcDay() }, aIdx)],
        [own.monthly, spentIn(m, uIdx, currency, { month: utcMonth() }, aIdx)],
      ].flatMap(([limit, spent]) => (limit === undefined ? [] : [limit - (spent as number)]));
      minor = Math.max(1, Math.min(...left) + (this.minor % 2));
      saw('charge aimed at an agent limit');
    }
    // Grant charges have keys of their own, so most are new requests rather than 422s against a plain charge's key.
    const key = g ? `gkey-${this.keyNo}` : `key-${this.keyNo}`;
    const description = `d${this.descNo}`;
    this.dayBefore = utcDay();
    const hourBefore = utcHour();
    const res = await r.call('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': a.key, 'x-user-key': g ? g.key : u.key, 'idempotency-key': key },
      raw: `{"amount":${text(minor, currency)},"currency":"${currency}","description":"${description}"${holdTerms}}`,
    });
    // A grant is for one currency: another is a bad request, refused before the key is looked at.
    if (g && currency !== g.currency) {
      expect([res.status, res.body]).toEqual([400, { error: 'currency does not match the grant' }]);
      return void saw('grant charge 400 currency');
    }
    const prior = a.charges.find((c) => c.key === key);
    if (prior) {
      const same =
        prior.user === uIdx &&
        prior.requested === minor &&
        prior.currency === currency &&
        prior.description === description &&
        prior.holdTerms === holdTerms;
      saw(same ? 'charge replay' : 'charge 422');
      if (same) {
        expect([res.status, res.text, res.headers.get('idempotent-replayed')]).toEqual([prior.statusCode, prior.text, 'true']);
      } else {
        expect([res.status, res.body]).toEqual([422, { error: 'idempotency key reused with different request' }]);
      }
      return;
    }
    // The running totals are the UTC day's and month's: if the day changed while the request ran,
    // either day's judgement may be the server's, so both are accepted.
    const dayAfter = utcDay();
    const spent =
      dayAfter === this.dayBefore
        ? {
            userDay: spentIn(m, uIdx, currency, { day: dayAfter }),
            agentDay: spentIn(m, uIdx, currency, { day: dayAfter }, aIdx),
            agentMonth: spentIn(m, uIdx, currency, { month: utcMonth() }, aIdx),
          }
        : undefined;
    if (spent === undefined) saw('charge across UTC midnight');
    const grantHour = grantHourFor(m, gIdx, hourBefore);
    const allowed = g
      ? judgeGrantCharge(u, g, minor, spent, grantSpentOf(m, gIdx as number), grantHour)
      : judgeCharge(u, aIdx, currency, minor, spent);
    const verdict = allowed.find(
      (v) => VERDICT_STATUS[v] === res.status && (VERDICT_ERROR[v] === undefined || res.body.error === VERDICT_ERROR[v]),
    );
    if (!verdict) {
      throw new Error(
        `charge ${minor} ${currency} by agent ${aIdx} (balance ${u.bal[currency]}, spent ${JSON.stringify(spent)}, ` +
          `policy ${JSON.stringify(u.policy)}): ` +
          `expected ${allowed.join(' or ')}, got ${res.status} ${res.text}`,
      );
    }
    saw(`${g ? 'grant ' : ''}charge ${VERDICT_STATUS[verdict]}${verdict === 'limit' ? ' limit' : ''}`);
    sawHourly(g, verdict, minor, grantHour, 'grant charge');
    // Revoked: refused by the grant item inside the charge's transaction, so nothing is kept.
    if (verdict === 'revoked') return void expect(res.body).toEqual({ error: VERDICT_ERROR.revoked });
    const counted = agentCounters(u.policy, aIdx, currency);
    if (counted) saw(`charge ${VERDICT_STATUS[verdict]} under an agent limit`);
    const body = res.body as { id?: string; createdAt?: string; expiresAt?: string | null; approvalUrl?: string; error?: string };
    const made = verdict === 'success' || verdict === 'pending';
    if (made) {
      expect(res.body).toMatchObject({
        status: verdict === 'pending' || isHold ? 'PENDING' : 'SUCCESS',
        amount: asJson(minor, currency),
        currency: currency,
        idempotencyKey: key,
        failureReason: null,
        pendingReason: verdict === 'pending' ? 'user_approval' : isHold ? 'capture' : null,
        authorizedAmount: isHold ? asJson(minor, currency) : null,
        refundedAmount: 0,
      });
      u.bal[currency] -= minor;
      moved(u, verdict === 'pending' || isHold ? 'hold' : 'charge', -minor, currency);
      if (verdict === 'pending') {
        u.held[currency] += minor;
        const window = (u.policy?.approvalWindowSeconds ?? 900) * 1000;
        expect(Date.parse(body.expiresAt ?? '') - Date.parse(body.createdAt ?? '')).toBe(window);
        // A grant key's charge: the approval link reaches the payer only.
        if (g) expect(body.approvalUrl).toBeNull();
        else expect(body.approvalUrl).toMatch(new RegExp(`/approve/${body.id}\\.[A-Za-z0-9_-]{43}$`));
      } else if (isHold) {
        u.held[currency] += minor;
        const window = (this.hold === 'short' ? 60 : 3600) * 1000;
        expect(Date.parse(body.expiresAt ?? '') - Date.parse(body.createdAt ?? '')).toBe(window);
        saw(`hold ${this.hold}`);
      } else {
        a.bal[currency] += minor;
        expect(body.expiresAt).toBeNull();
      }
    } else {
      expect(res.body).toEqual({ error: VERDICT_ERROR[verdict] });
    }
    a.charges.push({
      key,
      user: uIdx,
      amount: minor,
      currency: currency,
      description,
      status: made ? (verdict === 'pending' || isHold ? 'PENDING' : 'SUCCESS') : 'FAILED',
      statusCode: res.status,
      text: res.text,
      refunded: 0,
      requested: minor,
      holdTerms,
      ...(gIdx !== undefined ? { grant: gIdx } : {}),
      ...(isHold ? { hold: true } : {}),
      ...(made && (verdict === 'pending' || isHold)
        ? { pendingReason: verdict === 'pending' ? ('user_approval' as const) : ('capture' as const) }
        : {}),
      ...(made
        ? {
            id: body.id as string,
            day: (body.createdAt as string).slice(0, 10),
            month: (body.createdAt as string).slice(0, 7),
            hour: (body.createdAt as string).slice(0, 13),
            agentCounted: counted,
          }
        : {}),
      ...(verdict === 'pending' || (made && isHold) ? { expiresAt: body.expiresAt as string } : {}),
    });
  }
  /** The UTC day when the request was sent. */
  private dayBefore = '';
  toString = () =>
    `charge(${this.viaGrant ? `grant #${this.viaGrant.pick} aimed ${this.viaGrant.aim}, ` : ''}agent ${this.agent}, user ${this.user}, ${this.minor} ${this.currency}${this.aim === 'approval' ? ' or just above its approval threshold' : this.aim === 'agentLimit' ? ' or at its agent limit' : ''}, ${this.viaGrant ? 'g' : ''}key-${this.keyNo}, d${this.descNo}${this.hold === 'no' ? '' : `, hold ${this.hold}`})`;
}

/** Replays an earlier charge exactly: the stored answer, no second debit. */
class ReplayCharge implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly agent: number,
    readonly pick: number,
  ) {}
  // Purchases have keys of their own scope (ReplayPurchase replays them).
  check = (m: Readonly<Model>) => m.agents.some((a) => a.charges.some((c) => !c.purchase));
  async run(m: Model, r: Real): Promise<void> {
    const withCharges = m.agents.filter((a) => a.charges.some((c) => !c.purchase));
    const a = withCharges[this.agent % withCharges.length] as ModelAgent;
    const charges = a.charges.filter((c) => !c.purchase);
    const c = charges[this.pick % charges.length] as ModelCharge;
    const u = m.users[c.user] as ModelUser;
    // The key it was made with: a grant's, even once revoked (the first answer is the answer).
    const userKey = c.grant === undefined ? u.key : (m.grants[c.grant] as ModelGrant).key;
    const res = await r.call('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': a.key, 'x-user-key': userKey, 'idempotency-key': c.key },
      raw: `{"amount":${text(c.requested, c.currency)},"currency":"${c.currency}","description":"${c.description}"${c.holdTerms}}`,
    });
    expect([res.status, res.text, res.headers.get('idempotent-replayed')]).toEqual([c.statusCode, c.text, 'true']);
    saw('charge replay');
  }
  toString = () => `replay-charge(agent ${this.agent}, #${this.pick})`;
}

/** Replaces a user's whole policy (or clears it). */
class SetPolicy implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly user: number,
    readonly policy: ModelPolicy | undefined,
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const { user: uIdx, policy } = this.policy ? aimed(m, this.user % m.users.length, this.policy) : { user: this.user % m.users.length };
    const u = m.users[uIdx] as ModelUser;
    const json = policyJson(policy, m.agents);
    const res = await r.call('PUT', '/api/v1/users/me/policy', { headers: { 'x-user-key': u.key }, raw: JSON.stringify(json) });
    expect([res.status, res.body]).toEqual([200, json]);
    if (policy) u.policy = policy;
    else delete u.policy;
    saw(policy ? (policy.blocked !== undefined ? 'policy with a blocked agent' : 'policy') : 'policy cleared');
    if (policy?.agentLimits) saw('policy with agent limits');
    if (policy?.agentLimits && policy !== this.policy) saw('policy with agent limits over an open hold');
  }
  toString = () => `set-policy(user ${this.user}, ${JSON.stringify(this.policy ?? {})})`;
}

/**
 * The policy with its agent limits aimed at the payer, agent and currency of a PENDING charge
 * (when asked and there is one): amounts move to that currency's minor units.
 */
function aimed(m: Model, user: number, p: ModelPolicy): { user: number; policy: ModelPolicy } {
  if (!p.agentLimits?.aimAtOpenHold) return { user, policy: p };
  const open = allCharges(m).filter(({ c }) => c.status === 'PENDING');
  const target = open[(user + p.agentLimits.agent) % Math.max(1, open.length)];
  if (!target) return { user, policy: p };
  const scale = (minor: number | undefined) =>
    minor === undefined || target.c.currency === p.currency ? minor : target.c.currency === 'USDC' ? minor * 10_000 : minor / 10_000;
  const out: ModelPolicy = { currency: target.c.currency, approvalWindowSeconds: p.approvalWindowSeconds };
  for (const field of ['perCharge', 'daily', 'approvalAbove'] as const) {
    const v = scale(p[field]);
    if (v !== undefined) out[field] = v;
  }
  if (p.blocked !== undefined) out.blocked = p.blocked;
  const agentLimits: AgentLimits = { agent: target.agent };
  if (p.agentLimits.daily !== undefined) agentLimits.daily = scale(p.agentLimits.daily) as number;
  if (p.agentLimits.monthly !== undefined) agentLimits.monthly = scale(p.agentLimits.monthly) as number;
  out.agentLimits = agentLimits;
  return { user: target.c.user, policy: out };
}

/** Approves or declines a PENDING charge as its payer (409 `charge expired` once past expiresAt). */
class Settle implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    readonly action: 'approve' | 'decline',
  ) {}
  check = (m: Readonly<Model>) => allCharges(m).some(({ c }) => c.status === 'PENDING' && c.pendingReason === 'user_approval');
  async run(m: Model, r: Real): Promise<void> {
    const pending = allCharges(m).filter(({ c }) => c.status === 'PENDING' && c.pendingReason === 'user_approval');
    const { c, agent } = pending[this.pick % pending.length] as { c: ModelCharge; agent: number };
    const u = m.users[c.user] as ModelUser;
    const a = m.agents[agent] as ModelAgent;
    const due = Date.parse(c.expiresAt as string);
    // Close to expiresAt either answer is right: skip rather than guess.
    if (Math.abs(Date.now() - due) < 2_000) return void saw(`${this.action} skipped near expiry`);
    const late = Date.now() > due;
    const res = await r.call<{ status?: string; failureReason?: string | null; error?: string }>(
      'POST',
      `/api/v1/users/me/charges/${c.id}/${this.action}`,
      { headers: { 'x-user-key': u.key } },
    );
    if (late) {
      expect([res.status, res.body]).toEqual([409, { error: 'charge expired' }]);
      saw('settle 409 expired');
      return void saw(`${this.action} 409 expired`);
    }
    expectStatus(res, 200, this.action);
    if (this.action === 'approve' && c.hold) {
      // An approved hold waits for its capture, for its hold window from now.
      expect(res.body).toMatchObject({ id: c.id, status: 'PENDING', pendingReason: 'capture' });
      c.pendingReason = 'capture';
      c.expiresAt = (res.body as { expiresAt: string }).expiresAt;
      saw('approve');
      return void saw('approve hold');
    }
    if (this.action === 'approve') {
      expect(res.body).toMatchObject({ id: c.id, status: 'SUCCESS', failureReason: null, pendingReason: null });
      c.status = 'SUCCESS';
      a.bal[c.currency] += c.amount;
    } else {
      expect(res.body).toMatchObject({ id: c.id, status: 'FAILED', failureReason: 'declined by user', pendingReason: null });
      c.status = 'FAILED';
      u.bal[c.currency] += c.amount;
      moved(u, 'hold_release', c.amount, c.currency);
    }
    u.held[c.currency] -= c.amount;
    saw(this.action);
  }
  toString = () => `${this.action}(#${this.pick})`;
}

/** Acting on a charge that is not (or no longer) PENDING, or as another user: 409 or 404, nothing moves. */
class SettleRefused implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    readonly action: 'approve' | 'decline',
    readonly asOther: boolean,
  ) {}
  check = (m: Readonly<Model>) => allCharges(m).some(({ c }) => c.id !== undefined && (this.asOther || c.status !== 'PENDING'));
  async run(m: Model, r: Real): Promise<void> {
    const candidates = allCharges(m).filter(({ c }) => c.id !== undefined && (this.asOther || c.status !== 'PENDING'));
    const { c } = candidates[this.pick % candidates.length] as { c: ModelCharge };
    const who = this.asOther ? (c.user + 1) % m.users.length : c.user;
    const u = m.users[who] as ModelUser;
    const res = await r.call('POST', `/api/v1/users/me/charges/${c.id}/${this.action}`, { headers: { 'x-user-key': u.key } });
    const error = this.asOther ? 'charge not found' : c.status === 'EXPIRED' ? 'charge expired' : 'charge is not pending';
    expect([res.status, res.body]).toEqual([this.asOther ? 404 : 409, { error }]);
    saw(`settle ${this.asOther ? 404 : 409}`);
  }
  toString = () => `${this.action}-refused(#${this.pick}${this.asOther ? ', as another user' : ''})`;
}

/** The PENDING charges the sweeper may end: not a purchase whose payment is signed (the chain ends it, docs/x402.md). */
const sweepable = (m: Readonly<Model>) => allCharges(m).filter(({ c }) => c.status === 'PENDING' && !c.purchase?.signed);

/**
 * Runs the sweeper in-process as if it were 1 s past a PENDING charge's expiresAt: that charge and
 * every other one due by then become EXPIRED, their holds back to their users.
 */
class Expire implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => sweepable(m).length > 0;
  async run(m: Model): Promise<void> {
    const pending = sweepable(m);
    const { c } = pending[this.pick % pending.length] as { c: ModelCharge };
    const at = new Date(Date.parse(c.expiresAt as string) + 1_000);
    // The sweeper's index is sorted by `<expiresAt>#<chargeId>`, read below `at`.
    const due = pending.filter(({ c: p }) => (p.expiresAt as string) < at.toISOString());
    const report = await expireDueCharges(at);
    expect(report).toMatchObject({ due: due.length, expired: due.length, settled: 0, failed: 0 });
    for (const { c: p } of due) {
      const u = m.users[p.user] as ModelUser;
      p.status = 'EXPIRED';
      u.held[p.currency] -= p.amount;
      u.bal[p.currency] += p.amount;
      moved(u, 'hold_release', p.amount, p.currency);
    }
    saw('expire');
    if (due.length > 1) saw('expire several');
  }
  toString = () => `expire(#${this.pick})`;
}

// ---- the charge lifecycle (docs/lifecycle.md) -------------------------------------------------

/** The agent's call on one of its charges. */
const lifecycleCall = (r: Real, a: ModelAgent, id: string, action: string, body: string, key: string) =>
  r.call<{ status?: string; amount?: number; authorizedAmount?: number | null; refundedAmount?: number; error?: string }>(
    'POST',
    `/api/v1/agents/charge/${id}/${action}`,
    { headers: { 'x-agent-key': a.key, 'idempotency-key': key }, raw: body },
  );

/**
 * Captures all or part of a PENDING hold (409 while it awaits the user, or once past expiresAt;
 * 400 above what is held), or tries to capture a charge that is not PENDING (409).
 */
class Capture implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    /** 0: all (no amount); otherwise a part, at most the held amount, or (one in four) one unit above it. */
    readonly part: number,
  ) {}
  check = (m: Readonly<Model>) => agentCharges(m).some(({ c }) => c.hold && c.id !== undefined);
  async run(m: Model, r: Real): Promise<void> {
    const holds = agentCharges(m).filter(({ c }) => c.hold && c.id !== undefined);
    // Mostly holds still PENDING; one pick in four any hold (a capture of one that moved on).
    const pendingHolds = holds.filter(({ c }) => c.status === 'PENDING');
    const pool = pendingHolds.length > 0 && this.pick % 4 !== 0 ? pendingHolds : holds;
    const { c, agent } = pool[this.pick % pool.length] as { c: ModelCharge; agent: number };
    const a = m.agents[agent] as ModelAgent;
    const u = m.users[c.user] as ModelUser;
    const over = this.part % 4 === 3;
    const captured = this.part === 0 ? c.amount : over ? c.amount + 1 : 1 + (this.part % c.amount);
    const body = this.part === 0 ? '{}' : `{"amount":${text(captured, c.currency)}}`;
    if (c.status === 'PENDING' && Math.abs(Date.now() - Date.parse(c.expiresAt as string)) < 2_000)
      return void saw('capture skipped near expiry');
    const late = Date.now() > Date.parse(c.expiresAt as string);
    const res = await lifecycleCall(r, a, c.id as string, 'capture', body, `cap-${randomBytes(6).toString('hex')}`);
    const refusal = (status: number, error: string) => {
      expect([res.status, res.body]).toEqual([status, { error }]);
      saw(`capture ${status} ${error}`);
    };
    if (c.status !== 'PENDING') return refusal(409, c.status === 'EXPIRED' ? 'charge expired' : 'charge is not pending');
    if (over && this.part !== 0) return refusal(400, 'amount exceeds authorized amount');
    if (late) return refusal(409, 'charge expired');
    if (c.pendingReason === 'user_approval') return refusal(409, 'charge awaits user approval');
    // A hold against a changed mind (DESIGN §16): the payer blocked the agent, or revoked the grant it was made under.
    const refusals = [
      ...(u.policy?.blocked === agent ? ['agent blocked by user'] : []),
      ...(c.grant !== undefined && (m.grants[c.grant] as ModelGrant).revoked ? ['grant revoked'] : []),
    ];
    if (refusals.length > 0) {
      expect(res.status).toBe(403);
      expect(refusals).toContain((res.body as { error?: string }).error);
      return void saw(`capture 403 ${(res.body as { error?: string }).error}`);
    }
    expectStatus(res, 200, 'capture');
    expect(res.body).toMatchObject({
      status: 'SUCCESS',
      amount: asJson(captured, c.currency),
      authorizedAmount: asJson(c.amount, c.currency),
    });
    u.held[c.currency] -= c.amount;
    u.bal[c.currency] += c.amount - captured;
    if (c.amount > captured) moved(u, 'hold_release', c.amount - captured, c.currency);
    a.bal[c.currency] += captured;
    c.amount = captured;
    c.status = 'SUCCESS';
    saw(captured === c.amount && this.part === 0 ? 'capture all' : 'capture part');
  }
  toString = () => `capture(#${this.pick}, part ${this.part})`;
}

/** Releases a PENDING charge (either reason): FAILED, the hold back; 409 once it is not PENDING. */
class Release implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => agentCharges(m).some(({ c }) => c.id !== undefined && (c.hold || c.status === 'PENDING'));
  async run(m: Model, r: Real): Promise<void> {
    const candidates = agentCharges(m).filter(({ c }) => c.id !== undefined && (c.hold || c.status === 'PENDING'));
    const pending = candidates.filter(({ c }) => c.status === 'PENDING');
    const pool = pending.length > 0 && this.pick % 4 !== 0 ? pending : candidates;
    const { c, agent } = pool[this.pick % pool.length] as { c: ModelCharge; agent: number };
    const a = m.agents[agent] as ModelAgent;
    const u = m.users[c.user] as ModelUser;
    if (c.status === 'PENDING' && Math.abs(Date.now() - Date.parse(c.expiresAt as string)) < 2_000)
      return void saw('release skipped near expiry');
    const late = Date.now() > Date.parse(c.expiresAt as string);
    const res = await lifecycleCall(r, a, c.id as string, 'release', '{}', `rel-${randomBytes(6).toString('hex')}`);
    if (c.status !== 'PENDING' || late) {
      const error = c.status === 'EXPIRED' || (c.status === 'PENDING' && late) ? 'charge expired' : 'charge is not pending';
      expect([res.status, res.body]).toEqual([409, { error }]);
      return void saw(`release 409 ${error}`);
    }
    expectStatus(res, 200, 'release');
    expect(res.body).toMatchObject({ status: 'FAILED', failureReason: 'released by agent', pendingReason: null });
    u.held[c.currency] -= c.amount;
    u.bal[c.currency] += c.amount;
    moved(u, 'hold_release', c.amount, c.currency);
    c.status = 'FAILED';
    saw('release');
  }
  toString = () => `release(#${this.pick})`;
}

/**
 * Refunds all that is left or a part of a charge: 200 with the cumulative refundedAmount, 400 past
 * what is left, 402 when the agent's earned balance is too low, 409 for a charge not SUCCESS.
 */
class Refund implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    /** 0: all that is left; otherwise a part (which may pass what is left). */
    readonly part: number,
  ) {}
  check = (m: Readonly<Model>) => agentCharges(m).some(({ c }) => c.id !== undefined);
  async run(m: Model, r: Real): Promise<void> {
    // Mostly SUCCESS charges; any charge that was made can be picked.
    const made = agentCharges(m).filter(({ c }) => c.id !== undefined);
    const success = made.filter(({ c }) => c.status === 'SUCCESS');
    const others = made.filter(({ c }) => c.status !== 'SUCCESS');
    const pool = others.length > 0 && this.pick % 4 === 0 ? others : success.length > 0 ? success : made;
    const { c, agent } = pool[this.pick % pool.length] as { c: ModelCharge; agent: number };
    const a = m.agents[agent] as ModelAgent;
    const u = m.users[c.user] as ModelUser;
    const left = c.amount - c.refunded;
    const amount = this.part === 0 ? left : 1 + (this.part % Math.max(1, c.amount));
    const body = this.part === 0 ? '{}' : `{"amount":${text(amount, c.currency)}}`;
    const res = await lifecycleCall(r, a, c.id as string, 'refund', body, `ref-${randomBytes(6).toString('hex')}`);
    const refusal = (status: number, error: string) => {
      expect([res.status, res.body]).toEqual([status, { error }]);
      saw(`refund ${status}`);
    };
    if (c.status !== 'SUCCESS') return refusal(409, 'charge is not refundable');
    if (amount > left || amount === 0) return refusal(400, 'amount exceeds refundable amount');
    if (a.bal[c.currency] < amount) return refusal(402, 'insufficient balance');
    expectStatus(res, 200, 'refund');
    c.refunded += amount;
    expect(res.body).toMatchObject({ status: 'SUCCESS', refundedAmount: asJson(c.refunded, c.currency) });
    a.bal[c.currency] -= amount;
    u.bal[c.currency] += amount;
    moved(u, 'refund', amount, c.currency);
    saw(amount === left ? 'refund rest' : 'refund part');
  }
  toString = () => `refund(#${this.pick}, part ${this.part})`;
}

type Outcome = 'pays' | 'refused' | 'held-claimed' | 'held-returned';

class Withdraw implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly agent: number,
    readonly currency: Currency,
    readonly units: number,
    readonly outcome: Outcome,
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const a = m.agents[this.agent % m.agents.length] as ModelAgent;
    const gross = this.units * (this.currency === 'USD' ? 100 : 1_000_000);
    // USDC goes to the agent's Solana wallet (LiteSVM); USD to the PayPal stand-in, whose receiver
    // name decides: success → SUCCESS, fail → FAILED (refund), unclaimed → stays in flight.
    const outcome: Outcome = this.currency === 'USDC' ? 'pays' : this.outcome;
    const held = outcome === 'held-claimed' || outcome === 'held-returned';
    const walletAddress =
      this.currency === 'USDC'
        ? a.wallet
        : held
          ? 'unclaimed@example.com'
          : outcome === 'pays'
            ? 'success@example.com'
            : 'fail@example.com';
    const key = `wd-${randomBytes(6).toString('hex')}`;
    const body = JSON.stringify({ amount: this.units, currency: this.currency, walletAddress });
    const res = await r.call<{ payoutId: string; breakdown: Record<string, unknown>; error?: string }>('POST', '/api/v1/agents/withdraw', {
      headers: { 'x-agent-key': a.key, 'idempotency-key': key },
      raw: body,
    });
    if (a.bal[this.currency] < gross) {
      expect([res.status, res.body]).toEqual([400, { error: 'insufficient balance' }]);
      saw('withdraw insufficient');
      return;
    }
    expectStatus(res, 200, 'withdraw');
    const basis = a.fees[this.currency];
    // 3% of all the agent withdrew in the currency, less what its earlier payouts were charged.
    const fee = cumulativeFee(basis, gross);
    expect(res.body.breakdown).toMatchObject({
      grossAmount: asJson(gross, this.currency),
      platformFee: asJson(fee, this.currency),
      netAmount: asJson(gross - fee, this.currency),
    });
    a.bal[this.currency] -= gross;
    a.fees[this.currency] = { withdrawn: basis.withdrawn + gross, feesPaid: basis.feesPaid + fee };
    const p: ModelPayout = { id: res.body.payoutId, key, body, text: res.text, currency: this.currency, gross, status: 'PENDING' };
    a.payouts.push(p);

    if (held) {
      p.status = await until(a, p.id, ['PROCESSING']);
      // In flight: a second withdrawal in its currency is refused (one payout in flight per agent
      // and currency), the same one replays, the audit still holds.
      const second = await r.call('POST', '/api/v1/agents/withdraw', {
        headers: { 'x-agent-key': a.key, 'idempotency-key': `${key}-2` },
        raw: JSON.stringify({ amount: 1, currency: this.currency, walletAddress: 'success@example.com' }),
      });
      expect([second.status, second.body]).toEqual([
        400,
        { error: a.bal[this.currency] >= 100 ? 'payout already in progress' : 'insufficient balance' },
      ]);
      const again = await r.call('POST', '/api/v1/agents/withdraw', {
        headers: { 'x-agent-key': a.key, 'idempotency-key': key },
        raw: body,
      });
      expect([again.status, again.text]).toEqual([200, res.text]);
      await checkAgainstModel(m, r, 'while a payout is held in flight');
      const batch = r.stack.rails.paypal.batchBySenderId(p.id);
      if (!batch) throw new Error(`no PayPal batch for held payout ${p.id}`);
      // The recipient claims it, or PayPal returns it: the reconciler finishes it either way.
      const claimed = outcome === 'held-claimed';
      r.stack.rails.paypal.setItemStatus(batch.payoutBatchId, claimed ? 'SUCCESS' : 'RETURNED');
      p.status = await until(a, p.id, ['COMPLETED', 'FAILED']);
      expect(p.status).toBe(claimed ? 'COMPLETED' : 'FAILED');
    } else {
      p.status = await until(a, p.id, ['COMPLETED', 'FAILED']);
      expect(p.status).toBe(outcome === 'pays' ? 'COMPLETED' : 'FAILED');
    }
    if (p.status === 'FAILED') {
      a.bal[this.currency] += gross;
      // A refunded payout gives its gross and fee back to the count.
      a.fees[this.currency] = basis;
    }
    saw(`withdraw ${this.currency} ${outcome} ${p.status}`);
  }
  toString = () => `withdraw(agent ${this.agent}, ${this.units} ${this.currency}, ${this.outcome})`;
}

/** Replays the agent's last withdrawal: the first answer again, never a second payout. */
class ReplayWithdraw implements fc.AsyncCommand<Model, Real> {
  constructor(readonly agent: number) {}
  check = (m: Readonly<Model>) => m.agents.some((a) => a.payouts.length > 0);
  async run(m: Model, r: Real): Promise<void> {
    const withPayouts = m.agents.filter((a) => a.payouts.length > 0);
    const a = withPayouts[this.agent % withPayouts.length] as ModelAgent;
    const p = a.payouts[a.payouts.length - 1] as ModelPayout;
    const res = await r.call('POST', '/api/v1/agents/withdraw', {
      headers: { 'x-agent-key': a.key, 'idempotency-key': p.key },
      raw: p.body,
    });
    expect([res.status, res.text, res.headers.get('idempotent-replayed')]).toEqual([200, p.text, 'true']);
    saw('withdraw replay');
  }
  toString = () => `replay-withdraw(agent ${this.agent})`;
}

// ---- the operator and a disabled agent's money (docs/payouts.md "Held payouts", docs/lifecycle.md) ----

const setEnabled = async (r: Real, a: ModelAgent, enabled: boolean) =>
  expectStatus(await r.call('PATCH', `/api/v1/admin/agents/${a.id}`, { headers: r.admin, body: { enabled } }), 200, 'enable/disable');

/**
 * The operator gives back all that is left or a part of one of an agent's charges, from the
 * agent's earned balance, over the admin route, the agent disabled around it or not: the same
 * answers as the agent's own refund (409 not SUCCESS, 400 past what is left, 402 too little
 * balance, 200 with the cumulative refundedAmount), and the same key replays the first answer.
 */
class OperatorRefund implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    /** 0: all that is left; otherwise a part (which may pass what is left). */
    readonly part: number,
    readonly disabled: boolean,
  ) {}
  check = (m: Readonly<Model>) => agentCharges(m).some(({ c }) => c.id !== undefined);
  async run(m: Model, r: Real): Promise<void> {
    const made = agentCharges(m).filter(({ c }) => c.id !== undefined);
    const success = made.filter(({ c }) => c.status === 'SUCCESS');
    const pool = this.pick % 5 === 0 || success.length === 0 ? made : success;
    const { c, agent } = pool[this.pick % pool.length] as { c: ModelCharge; agent: number };
    const a = m.agents[agent] as ModelAgent;
    const u = m.users[c.user] as ModelUser;
    const left = c.amount - c.refunded;
    const amount = this.part === 0 ? left : 1 + (this.part % Math.max(1, c.amount));
    const body = this.part === 0 ? '{}' : `{"amount":${text(amount, c.currency)}}`;
    const key = `opref-${randomBytes(6).toString('hex')}`;
    const call = () =>
      r.call<{ status: string; refundedAmount: number }>('POST', `/api/v1/admin/agents/${a.id}/charges/${c.id}/refund`, {
        headers: { ...r.admin, 'idempotency-key': key },
        raw: body,
      });
    if (this.disabled) await setEnabled(r, a, false);
    try {
      const res = await call();
      const refusal = (status: number, error: string) => {
        expect([res.status, res.body]).toEqual([status, { error }]);
        saw(`operator refund ${status}`);
      };
      if (c.status !== 'SUCCESS') return refusal(409, 'charge is not refundable');
      if (amount > left || amount === 0) return refusal(400, 'amount exceeds refundable amount');
      if (a.bal[c.currency] < amount) return refusal(402, 'insufficient balance');
      expectStatus(res, 200, 'operator refund');
      c.refunded += amount;
      expect(res.body).toMatchObject({ status: 'SUCCESS', refundedAmount: asJson(c.refunded, c.currency) });
      a.bal[c.currency] -= amount;
      u.bal[c.currency] += amount;
      moved(u, 'refund', amount, c.currency);
      const again = await call();
      expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([200, res.text, 'true']);
      saw(`operator refund 200${this.disabled ? ' of a disabled agent' : ''}`);
    } finally {
      if (this.disabled) await setEnabled(r, a, true);
    }
  }
  toString = () => `operator-refund(#${this.pick}, part ${this.part}${this.disabled ? ', agent disabled' : ''})`;
}

/**
 * A withdrawal whose queue message is lost, the agent disabled before the reconciler re-sends it:
 * the worker holds it (HELD, money still debited, the audit holding), and the operator cancels it
 * (FAILED, the gross back, the same key replaying) or releases it (paid once although the agent
 * is disabled). The agent is enabled again after.
 */
class HeldPayout implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly agent: number,
    readonly currency: Currency,
    readonly units: number,
    readonly action: 'cancel' | 'release',
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const a = m.agents[this.agent % m.agents.length] as ModelAgent;
    const unit = this.currency === 'USD' ? 100 : 1_000_000;
    const units = Math.min(this.units, Math.floor(a.bal[this.currency] / unit));
    if (units < 1) return void saw('held payout: nothing to withdraw');
    const gross = units * unit;
    const walletAddress = this.currency === 'USDC' ? a.wallet : 'success@example.com';
    const key = `held-${randomBytes(6).toString('hex')}`;
    const body = JSON.stringify({ amount: units, currency: this.currency, walletAddress });
    const lost = inject({ client: 'sqs', command: 'SendMessageCommand', times: 1, error: () => new Error('model: SQS unreachable') });
    let res: Reply<{ payoutId: string; breakdown: Record<string, unknown> }>;
    try {
      res = await r.call('POST', '/api/v1/agents/withdraw', { headers: { 'x-agent-key': a.key, 'idempotency-key': key }, raw: body });
    } finally {
      lost.remove();
    }
    expectStatus(res, 200, 'withdraw to be held');
    const basis = a.fees[this.currency];
    const fee = cumulativeFee(basis, gross);
    expect(res.body.breakdown).toMatchObject({ platformFee: asJson(fee, this.currency) });
    a.bal[this.currency] -= gross;
    a.fees[this.currency] = { withdrawn: basis.withdrawn + gross, feesPaid: basis.feesPaid + fee };
    // Its key and body: a later replay of the agent's last withdrawal answers this one.
    const p: ModelPayout = { id: res.body.payoutId, key, body, text: res.text, currency: this.currency, gross, status: 'PENDING' };
    a.payouts.push(p);
    await setEnabled(r, a, false);
    try {
      await eventually(`payout ${p.id} held`, async () => (await getPayout(a.id, p.id))?.status === 'HELD', { timeoutMs: 20_000 });
      p.status = 'HELD';
      const audit = await runLedgerAudit();
      if (!audit.ok) throw new Error(`while payout ${p.id} is held: ${formatAuditReport(audit)}`);
      const path = `/api/v1/admin/agents/${a.id}/payouts/${p.id}/${this.action}`;
      if (this.action === 'cancel') {
        const headers = { ...r.admin, 'idempotency-key': `cancel-${p.id}` };
        const cancelled = await r.call<{ status: string; failureReason: string }>('POST', path, { headers });
        expectStatus(cancelled, 200, 'cancel');
        expect([cancelled.body.status, cancelled.body.failureReason]).toEqual(['FAILED', 'cancelled by operator']);
        const again = await r.call('POST', path, { headers });
        expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([200, cancelled.text, 'true']);
        p.status = 'FAILED';
        a.bal[this.currency] += gross;
        a.fees[this.currency] = basis;
      } else {
        expectStatus(await r.call('POST', path, { headers: r.admin }), 200, 'release');
        await eventually(`released payout ${p.id} paid`, async () => (await getPayout(a.id, p.id))?.status === 'COMPLETED', {
          timeoutMs: 20_000,
        });
        p.status = 'COMPLETED';
      }
    } finally {
      await setEnabled(r, a, true);
    }
    saw(`held payout ${this.action}`);
    saw(`held payout ${this.currency} ${this.action}`);
  }
  toString = () => `held-payout(agent ${this.agent}, ${this.units} ${this.currency}, ${this.action})`;
}

// ---- grants (docs/grants.md) ----------------------------------------------------------------

/** The grant's JSON as the payer's API shows it (limits in its currency's decimals). */
function grantTermsJson(g: Pick<ModelGrant, 'currency' | 'perCharge' | 'hourly' | 'total' | 'approvalAbove'>): Record<string, unknown> {
  const limits: Record<string, number> = {};
  if (g.perCharge !== undefined) limits.perCharge = asJson(g.perCharge, g.currency);
  if (g.hourly !== undefined) limits.hourly = asJson(g.hourly, g.currency);
  if (g.total !== undefined) limits.total = asJson(g.total, g.currency);
  return { currency: g.currency, limits, ...(g.approvalAbove !== undefined ? { approvalAbove: asJson(g.approvalAbove, g.currency) } : {}) };
}

/** The payer gives an agent a grant: per-charge and total limits, maybe an approval threshold (amounts in USD cents, scaled to USDC). */
class CreateGrant implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly user: number,
    readonly agent: number,
    readonly currency: Currency,
    readonly perCharge: number | undefined,
    readonly total: number | undefined,
    readonly approvalAbove: number | undefined,
    /** Its hourly limit (USD cents); by default the next of the run's generated ones. */
    readonly hourlyLimit?: number,
  ) {}
  /** A few live grants at a time, so charges under each are many. */
  check = (m: Readonly<Model>) => m.grants.filter((g) => !g.revoked).length < 3;
  async run(m: Model, r: Real): Promise<void> {
    const scale = (cents: number | undefined) => (cents === undefined ? undefined : this.currency === 'USD' ? cents : cents * 10_000);
    // The hourly limit comes from the run's own list (generated after every step, so the steps stay the sequences a seed gave).
    const hourly = this.hourlyLimit ?? m.hourlies[m.grants.length];
    const terms = {
      currency: this.currency,
      ...(this.perCharge !== undefined ? { perCharge: scale(this.perCharge) } : {}),
      ...(hourly !== undefined ? { hourly: scale(hourly) } : {}),
      ...(this.total !== undefined ? { total: scale(this.total) } : {}),
      ...(this.approvalAbove !== undefined ? { approvalAbove: scale(this.approvalAbove) } : {}),
    };
    const user = this.user % m.users.length;
    const agent = this.agent % m.agents.length;
    const u = m.users[user] as ModelUser;
    const a = m.agents[agent] as ModelAgent;
    const json = grantTermsJson(terms);
    const res = await r.call<{ id: string; key: string }>('POST', '/api/v1/users/me/grants', {
      headers: { 'x-user-key': u.key },
      raw: JSON.stringify({ agentId: a.id, ...json, description: 'model' }),
    });
    expectStatus(res, 201, 'create grant');
    expect(res.body).toMatchObject({ ...json, agent: { id: a.id }, status: 'active', spent: 0, expiresAt: null, revokedAt: null });
    expect(res.body.key).toMatch(/^ug_live_/);
    m.grants.push({ id: res.body.id, key: res.body.key, user, agent, revoked: false, ...terms });
    saw('grant created');
    if (hourly !== undefined) saw('grant created with an hourly limit');
  }
  toString = () =>
    `create-grant(user ${this.user}, agent ${this.agent}, ${this.currency}, perCharge ${this.perCharge}, total ${this.total}, approvalAbove ${this.approvalAbove})`;
}

/** The payer revokes a grant (a second DELETE answers the same 200): its key charges nothing more, its holds cannot be captured. */
class RevokeGrant implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    readonly twice: boolean,
  ) {}
  check = (m: Readonly<Model>) => m.grants.some((g) => !g.revoked);
  async run(m: Model, r: Real): Promise<void> {
    const live = m.grants.filter((g) => !g.revoked);
    const g = live[this.pick % live.length] as ModelGrant;
    const u = m.users[g.user] as ModelUser;
    const revoke = () =>
      r.call<{ status: string; revokedAt: string }>('DELETE', `/api/v1/users/me/grants/${g.id}`, { headers: { 'x-user-key': u.key } });
    const res = await revoke();
    expectStatus(res, 200, 'revoke grant');
    expect(res.body.status).toBe('revoked');
    if (this.twice) expect((await revoke()).text).toBe(res.text);
    g.revoked = true;
    saw('grant revoked');
  }
  toString = () => `revoke-grant(#${this.pick}${this.twice ? ', twice' : ''})`;
}

// ---- x402 settlements (docs/x402.md) --------------------------------------------------------

/** The requirements agent `a`'s middleware sends: its seller memo (`x402:<id>`, GET /api/v1/agents/x402) names it. */
const x402AcceptsOf = (a: ModelAgent, amount: number) => ({
  ...x402Accepts,
  amount: String(amount),
  extra: { ...x402Accepts.extra, memo: `x402:${a.id}` },
});

/** A fresh payment of `amount` micro-USDC to the treasury for agent `a`, signed by the demo payer as the stock client signs it (not sent). */
function x402Payment(r: Real, a: ModelAgent, amount: number): Promise<PaymentPayload> {
  // The local chain makes a block (a new blockhash) only when a transaction lands: two payments of
  // one price signed with nothing landed between them would be one transaction. Move it on.
  r.stack.rails.solana.expireBlockhash();
  return buyer.createPaymentPayload({
    x402Version: 2,
    resource: { url: 'https://seller.example.com/model', description: 'model', mimeType: 'application/json' },
    accepts: [x402AcceptsOf(a, amount)],
  });
}

/** Agent `a` settles the payload, with its own middleware's requirements (by default the payment's own). */
const x402Settle = (r: Real, a: ModelAgent, payload: PaymentPayload, requirements = payload.accepted) =>
  r.call<{ success: boolean; errorReason?: string; transaction: string }>('POST', '/x402/settle', {
    headers: { 'x-agent-key': a.key },
    body: { x402Version: 2, paymentPayload: payload, paymentRequirements: requirements },
  });

/** Each agent's x402 payments as it lists them: each settled payment once, newest first (checked after the x402 steps only). */
async function expectX402Listed(m: Model, r: Real): Promise<void> {
  for (const [agent, a] of m.agents.entries()) {
    const listed = await r.call<{ data: { amount: number; transaction: string }[] }>('GET', '/api/v1/agents/x402/payments?limit=100', {
      headers: { 'x-agent-key': a.key },
    });
    const want = m.x402.filter((x) => x.agent === agent).map((x) => [asJson(x.amount, 'USDC'), JSON.parse(x.text).transaction]);
    expect({ agent: a.id, x402: listed.body.data.map((p) => [p.amount, p.transaction]) }).toEqual({ agent: a.id, x402: want.reverse() });
  }
}

/** An agent settles a new x402 payment: its USDC balance is credited the amount, once. */
class X402Settle implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly agent: number,
    /** Hundredths of a USDC (at least X402_MIN_AMOUNT, 0.01). */
    readonly cents: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const agent = this.agent % m.agents.length;
    const a = m.agents[agent] as ModelAgent;
    const amount = this.cents * 10_000;
    const payload = await x402Payment(r, a, amount);
    const res = await x402Settle(r, a, payload);
    expectStatus(res, 200, 'x402 settle');
    expect(res.body).toMatchObject({ success: true, network: x402Accepts.network });
    expect(res.body.transaction).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    a.bal.USDC += amount;
    m.x402.push({ agent, amount, payload, text: res.text });
    await expectX402Listed(m, r);
    saw('x402 settle');
  }
  toString = () => `x402-settle(agent ${this.agent}, ${this.cents / 100} USDC)`;
}

/** An earlier x402 payment settled again: by its agent, the first answer and no credit; by another, success:false. */
class X402Replay implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    readonly byOther: boolean,
  ) {}
  check = (m: Readonly<Model>) => m.x402.length > 0;
  async run(m: Model, r: Real): Promise<void> {
    const x = m.x402[this.pick % m.x402.length] as ModelX402;
    const agent = this.byOther ? (x.agent + 1) % m.agents.length : x.agent;
    const settler = m.agents[agent] as ModelAgent;
    // Another agent asks with its own middleware's requirements (its own seller memo): the payment is not its.
    const res = await x402Settle(r, settler, x.payload, x402AcceptsOf(settler, Number(x.payload.accepted.amount)));
    if (this.byOther) {
      expect([res.status, res.body]).toMatchObject([200, { success: false, errorReason: 'duplicate_settlement', transaction: '' }]);
      return void saw('x402 settle by another agent');
    }
    expect([res.status, res.text, res.headers.get('idempotent-replayed')]).toEqual([200, x.text, 'true']);
    await expectX402Listed(m, r);
    saw('x402 replay');
  }
  toString = () => `x402-replay(#${this.pick}${this.byOther ? ', by another agent' : ''})`;
}

// ---- x402 purchases (docs/x402.md "Buying from x402 sellers") -----------------------------------

/** The seller the model's agents buy from: a wallet outside the service, and its stock facilitator (its own fee payer). */
let seller: { wallet: string; feePayer: string; facilitator: x402Facilitator };
/** Below this a seller's amount is refused before anything is held (X402_MIN_AMOUNT, 0.01 USDC). */
const MIN_PURCHASE = 10_000;
const purchaseRead = (r: Real, a: ModelAgent, id: string) =>
  r.call<{
    status: string;
    failureReason: string | null;
    paymentPayload: PaymentPayload | null;
    expiresAt: string;
    transaction: string | null;
  }>('GET', `/api/v1/agents/x402/purchases/${id}`, { headers: { 'x-agent-key': a.key } });
/** The last block height the purchase's payment can land at, as its record keeps it (the answer does not show it). */
async function lastValidBlockHeight(a: ModelAgent, id: string): Promise<number> {
  const charge = await getCharge(a.id, `c${id.slice(2)}`);
  const height = charge?.purchase?.signed?.lastValidBlockHeight;
  if (height === undefined) throw new Error(`purchase ${id} has no signed payment`);
  return height;
}
/** Every purchase of the model with its agent. */
const allPurchases = (m: Readonly<Model>) => allCharges(m).filter(({ c }) => c.purchase !== undefined);

/**
 * An agent buys from the seller: with a USDC grant's key (amounts aimed at what is left under its
 * total, or just above its approval threshold) or its payer's own key. Judged as a hold with
 * `capture: false` is (the same policy and grant checks, in the same order): 201 with the payment
 * signed at once, 202 waiting for the payer, or the charge's refusals; the amount held either way.
 */
class Purchase implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    readonly viaGrant: boolean,
    /** Hundredths of a USDC. */
    readonly cents: number,
    readonly aim: 'none' | 'total' | 'approval',
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    // Aimed at approval: a grant, or a payer, with a USDC threshold when there is one.
    const approving = this.aim === 'approval';
    const usdc = m.grants.flatMap((g, i) => (g.currency === 'USDC' ? [i] : []));
    const withThreshold = usdc.filter((i) => (m.grants[i] as ModelGrant).approvalAbove !== undefined);
    const usdcGrants = approving && withThreshold.length > 0 ? withThreshold : usdc;
    const gIdx = this.viaGrant && usdcGrants.length > 0 ? (usdcGrants[this.pick % usdcGrants.length] as number) : undefined;
    const g = gIdx === undefined ? undefined : (m.grants[gIdx] as ModelGrant);
    const payers = m.users.flatMap((x, i) => (x.policy?.currency === 'USDC' && x.policy.approvalAbove !== undefined ? [i] : []));
    const uIdx = g ? g.user : approving && payers.length > 0 ? (payers[this.pick % payers.length] as number) : this.pick % m.users.length;
    const aIdx = g ? g.agent : (this.pick >> 2) % m.agents.length;
    const u = m.users[uIdx] as ModelUser;
    const a = m.agents[aIdx] as ModelAgent;
    let minor = this.cents * 10_000;
    // What is left under the grant's total and its hour (the tighter).
    const lefts = [
      g?.total === undefined ? undefined : g.total - grantSpentOf(m, gIdx as number),
      g?.hourly === undefined ? undefined : g.hourly - grantHourSpentOf(m, gIdx as number, utcHour()),
    ].filter((x): x is number => x !== undefined);
    const left = lefts.length === 0 ? undefined : Math.min(...lefts);
    const threshold = g ? g.approvalAbove : u.policy?.currency === 'USDC' ? u.policy.approvalAbove : undefined;
    if (this.aim === 'total' && left !== undefined) minor = left + (this.cents % 2) * 10_000;
    else if (this.aim === 'approval' && threshold !== undefined) minor = threshold + 10_000;
    else if (g) minor = Math.min(minor, g.perCharge ?? minor, g.approvalAbove ?? minor, left !== undefined && left > 0 ? left : minor);
    minor = Math.max(MIN_PURCHASE, minor);
    const requirements = {
      scheme: 'exact',
      network: x402Accepts.network,
      asset: x402Accepts.asset,
      amount: String(minor),
      payTo: seller.wallet,
      maxTimeoutSeconds: 60,
      extra: { feePayer: seller.feePayer },
    };
    const url = `https://seller.example.com/item/${randomBytes(4).toString('hex')}`;
    const body = JSON.stringify({ x402Version: 2, paymentRequirements: requirements, resource: { url } });
    const key = `xp-${randomBytes(6).toString('hex')}`;
    this.dayBefore = utcDay();
    const hourBefore = utcHour();
    const res = await r.call<{
      id: string;
      status: string;
      pendingReason: string | null;
      createdAt: string;
      expiresAt: string;
      paymentPayload: PaymentPayload | null;
      error?: string;
    }>('POST', '/api/v1/agents/x402/purchases', {
      headers: { 'x-agent-key': a.key, 'x-user-key': g ? g.key : u.key, 'idempotency-key': key },
      raw: body,
    });
    const dayAfter = utcDay();
    const spent =
      dayAfter === this.dayBefore
        ? {
            userDay: spentIn(m, uIdx, 'USDC', { day: dayAfter }),
            agentDay: spentIn(m, uIdx, 'USDC', { day: dayAfter }, aIdx),
            agentMonth: spentIn(m, uIdx, 'USDC', { month: utcMonth() }, aIdx),
          }
        : undefined;
    const grantHour = grantHourFor(m, gIdx, hourBefore);
    const allowed = g
      ? judgeGrantCharge(u, g, minor, spent, grantSpentOf(m, gIdx as number), grantHour)
      : judgeCharge(u, aIdx, 'USDC', minor, spent);
    const verdict = allowed.find(
      (v) => VERDICT_STATUS[v] === res.status && (VERDICT_ERROR[v] === undefined || res.body.error === VERDICT_ERROR[v]),
    );
    if (!verdict) {
      throw new Error(
        `purchase ${minor} USDC by agent ${aIdx} (balance ${u.bal.USDC}, spent ${JSON.stringify(spent)}, policy ${JSON.stringify(u.policy)}): ` +
          `expected ${allowed.join(' or ')}, got ${res.status} ${res.text}`,
      );
    }
    saw(`purchase ${VERDICT_STATUS[verdict]}`);
    sawHourly(g, verdict, minor, grantHour, 'purchase');
    if (verdict === 'revoked') return void expect(res.body).toEqual({ error: VERDICT_ERROR.revoked });
    const made = verdict === 'success' || verdict === 'pending';
    const counted = agentCounters(u.policy, aIdx, 'USDC');
    const c: ModelCharge = {
      key,
      user: uIdx,
      amount: minor,
      currency: 'USDC',
      description: `x402: ${url}`,
      status: made ? 'PENDING' : 'FAILED',
      statusCode: res.status,
      text: res.text,
      refunded: 0,
      requested: minor,
      holdTerms: '',
      hold: true,
      purchase: { body, requirements },
      ...(gIdx !== undefined ? { grant: gIdx } : {}),
    };
    if (made) {
      expect(res.body).toMatchObject({
        status: 'PENDING',
        pendingReason: verdict === 'pending' ? 'user_approval' : null,
        amount: asJson(minor, 'USDC'),
        currency: 'USDC',
        payTo: seller.wallet,
        resource: { url },
        grantId: g ? g.id : null,
      });
      expect(res.body.id).toMatch(/^xp01/);
      u.bal.USDC -= minor;
      moved(u, 'x402_purchase', -minor, 'USDC');
      u.held.USDC += minor;
      Object.assign(c, {
        id: res.body.id,
        day: res.body.createdAt.slice(0, 10),
        month: res.body.createdAt.slice(0, 7),
        hour: res.body.createdAt.slice(0, 13),
        agentCounted: counted,
        expiresAt: res.body.expiresAt,
        pendingReason: verdict === 'pending' ? 'user_approval' : 'capture',
      });
      if (verdict === 'pending') {
        // Nothing signed until the payer approves it.
        expect(res.body.paymentPayload).toBeNull();
        const window = (u.policy?.approvalWindowSeconds ?? 900) * 1000;
        expect(Date.parse(res.body.expiresAt) - Date.parse(res.body.createdAt)).toBe(window);
      } else {
        expect(res.body.paymentPayload).toMatchObject({ x402Version: 2, payload: { transaction: expect.any(String) } });
        (c.purchase as ModelPurchase).signed = {
          paymentPayload: res.body.paymentPayload as PaymentPayload,
          lastValidBlockHeight: await lastValidBlockHeight(a, res.body.id),
        };
      }
    } else {
      expect(res.body).toEqual({ error: VERDICT_ERROR[verdict] });
    }
    a.charges.push(c);
  }
  private dayBefore = '';
  toString = () => `purchase(#${this.pick}${this.viaGrant ? ' with a USDC grant' : ''}, ${this.cents / 100} USDC aimed ${this.aim})`;
}

/**
 * The seller's stock facilitator lands a purchase's payment (one the payer approved is fetched
 * first: GET builds it): the seller +amount on chain, then the purchase SUCCESS once, by the agent's
 * receipt or the stack's reconciler: the payer's hold becomes its spend, no agent is credited.
 */
class PurchaseLands implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    readonly by: 'receipt' | 'reconciler',
  ) {}
  check = (m: Readonly<Model>) => allPurchases(m).some(({ c }) => c.status === 'PENDING' && c.pendingReason === 'capture');
  async run(m: Model, r: Real): Promise<void> {
    const open = allPurchases(m).filter(({ c }) => c.status === 'PENDING' && c.pendingReason === 'capture');
    const { c, agent } = open[this.pick % open.length] as { c: ModelCharge; agent: number };
    const a = m.agents[agent] as ModelAgent;
    const u = m.users[c.user] as ModelUser;
    const purchase = c.purchase as ModelPurchase;
    const { solana } = r.stack.rails;
    if (!purchase.signed) {
      // Approved by its payer: the first read builds the payment; the sweeper no longer ends it.
      const read = await purchaseRead(r, a, c.id as string);
      // Unless the payer changed their mind since (DESIGN §16): nothing is signed, as a capture is refused.
      const refusals = [
        ...(u.policy?.blocked === agent ? ['agent blocked by user'] : []),
        ...(c.grant !== undefined && (m.grants[c.grant] as ModelGrant).revoked ? ['grant revoked'] : []),
      ];
      if (refusals.length > 0) {
        expect(read.status).toBe(403);
        expect(refusals).toContain((read.body as { error?: string }).error);
        return void saw(`purchase read 403 ${(read.body as { error?: string }).error}`);
      }
      expectStatus(read, 200, 'purchase read');
      expect(read.body.paymentPayload).toMatchObject({ x402Version: 2 });
      purchase.signed = {
        paymentPayload: read.body.paymentPayload as PaymentPayload,
        lastValidBlockHeight: await lastValidBlockHeight(a, c.id as string),
      };
      c.expiresAt = read.body.expiresAt;
      saw('purchase paid after approval');
    }
    // Past its last valid height it can never land: the reconciler releases it (endPurchases).
    if (solana.blockHeight() > purchase.signed.lastValidBlockHeight) return void saw('purchase too late to land');
    const before = solana.tokenBalance(seller.wallet);
    const requirements = purchase.requirements as unknown as PaymentRequirements;
    const settled = await seller.facilitator.settle(
      { ...purchase.signed.paymentPayload, accepted: requirements, resource: { url: 'https://seller.example.com/item' } } as PaymentPayload,
      requirements,
    );
    expect({ success: settled.success, error: settled.errorReason }).toEqual({ success: true, error: undefined });
    expect(solana.tokenBalance(seller.wallet) - before).toBe(BigInt(c.amount));
    if (this.by === 'receipt') {
      const receipt = await r.call<{ status: string; transaction: string }>('POST', `/api/v1/agents/x402/purchases/${c.id}/receipt`, {
        headers: { 'x-agent-key': a.key },
        body: { transaction: settled.transaction },
      });
      expectStatus(receipt, 200, 'purchase receipt');
      expect(receipt.body).toMatchObject({ status: 'SUCCESS', transaction: settled.transaction });
    } else {
      await eventually(
        `purchase ${c.id} captured by the reconciler`,
        async () => {
          const read = await purchaseRead(r, a, c.id as string);
          if (read.body.status !== 'SUCCESS') throw new Error(`purchase ${c.id} is ${read.body.status}`);
          expect(read.body.transaction).toBe(settled.transaction);
          return true;
        },
        { timeoutMs: 20_000 },
      );
    }
    c.status = 'SUCCESS';
    u.held.USDC -= c.amount;
    saw(`purchase lands, captured by the ${this.by}`);
  }
  toString = () => `purchase-lands(#${this.pick}, by the ${this.by})`;
}

/**
 * Payments never sent to the seller: the chain moves past every blockhash issued so far, and the
 * stack's reconciler releases each signed purchase still PENDING (EXPIRED, the hold back: endPurchases).
 */
class PurchaseNeverSent implements fc.AsyncCommand<Model, Real> {
  check = (m: Readonly<Model>) => allPurchases(m).some(({ c }) => c.status === 'PENDING' && c.purchase?.signed);
  async run(_m: Model, r: Real): Promise<void> {
    r.stack.rails.solana.expireBlockhash();
  }
  toString = () => 'purchase-never-sent()';
}

/**
 * An earlier purchase request again with its key: the first answer byte for byte (the same payment,
 * nothing held or signed again), or with another resource 422.
 */
class ReplayPurchase implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    readonly changed: boolean,
  ) {}
  check = (m: Readonly<Model>) => allPurchases(m).length > 0;
  async run(m: Model, r: Real): Promise<void> {
    const purchases = allPurchases(m);
    const { c, agent } = purchases[this.pick % purchases.length] as { c: ModelCharge; agent: number };
    const a = m.agents[agent] as ModelAgent;
    const userKey = c.grant === undefined ? (m.users[c.user] as ModelUser).key : (m.grants[c.grant] as ModelGrant).key;
    const purchase = c.purchase as ModelPurchase;
    const body = this.changed
      ? purchase.body.replace('https://seller.example.com/item/', 'https://elsewhere.example.com/item/')
      : purchase.body;
    const res = await r.call('POST', '/api/v1/agents/x402/purchases', {
      headers: { 'x-agent-key': a.key, 'x-user-key': userKey, 'idempotency-key': c.key },
      raw: body,
    });
    if (this.changed) {
      expect([res.status, res.body]).toEqual([422, { error: 'idempotency key reused with different request' }]);
      return void saw('purchase 422');
    }
    expect([res.status, res.text, res.headers.get('idempotent-replayed')]).toEqual([c.statusCode, c.text, 'true']);
    saw('purchase replay');
  }
  toString = () => `replay-purchase(#${this.pick}${this.changed ? ', another resource' : ''})`;
}

/**
 * What the chain decided since the last step: every signed purchase still PENDING whose blockhash
 * the chain has passed is released by the stack's reconciler (EXPIRED `not settled by the seller`,
 * the hold back to its payer and its grant). Whatever moved the chain (PurchaseNeverSent, an x402
 * payment's blockhash, payouts landing), the model waits for it here.
 */
async function endPurchases(m: Model, r: Real): Promise<void> {
  const height = r.stack.rails.solana.blockHeight();
  const due = allPurchases(m).filter(
    ({ c }) => c.status === 'PENDING' && c.purchase?.signed !== undefined && c.purchase.signed.lastValidBlockHeight < height,
  );
  for (const { c, agent } of due) {
    const a = m.agents[agent] as ModelAgent;
    await eventually(
      `purchase ${c.id} released once its blockhash expired`,
      async () => {
        const read = await purchaseRead(r, a, c.id as string);
        if (read.body.status === 'PENDING') throw new Error(`purchase ${c.id} still PENDING`);
        expect(read.body).toMatchObject({ status: 'EXPIRED', failureReason: 'not settled by the seller', paymentPayload: null });
        return true;
      },
      { timeoutMs: 20_000 },
    );
    const u = m.users[c.user] as ModelUser;
    c.status = 'EXPIRED';
    u.held.USDC -= c.amount;
    u.bal.USDC += c.amount;
    moved(u, 'hold_release', c.amount, 'USDC');
    saw('purchase expired');
  }
}

// ---- the check after every step ---------------------------------------------------------------

/** How often (in steps) the payers' statements are read whole and checked against the model's moves. */
const STATEMENT_EVERY = 10;
interface StatementRow {
  type: MoveType;
  amount: number;
  currency: Currency;
  balanceAfter: number;
}
const toMinor = (value: number, c: Currency) => Math.round(value * (c === 'USD' ? 100 : 1_000_000));

/**
 * Each payer's statement (GET /api/v1/users/me/statement, docs/statement.md) against the model's own
 * list of moves: the same movements (type, signed amount, currency; as multisets: the sweeper's
 * expiries of one step commit in any order), the newest `balanceAfter` of each currency the model's
 * balance, each older row's the newer one's minus the newer one's amount, and the balance before the
 * oldest row 0 (these payers were made with the statement).
 */
async function checkStatements(m: Model, r: Real, when: string): Promise<void> {
  await Promise.all(
    m.users.map(async (u, i) => {
      const rows: StatementRow[] = [];
      let cursor: string | null = null;
      do {
        const res: Reply<{ data: StatementRow[]; nextCursor: string | null }> = await r.call(
          'GET',
          `/api/v1/users/me/statement?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
          {
            headers: { 'x-user-key': u.key },
          },
        );
        expectStatus(res, 200, `statement of user ${i} ${when}`);
        rows.push(...res.body.data);
        cursor = res.body.nextCursor;
      } while (cursor);
      const key = (x: { type: string; amount: number; currency: string }) => `${x.type} ${x.amount} ${x.currency}`;
      const listed = rows.map((row) => key({ ...row, amount: toMinor(row.amount, row.currency) })).sort();
      expect({ user: i, when, moves: listed }).toEqual({ user: i, when, moves: u.moves.map(key).sort() });
      const running: Balances = { ...u.bal };
      for (const row of rows) {
        expect({ user: i, when, balanceAfter: toMinor(row.balanceAfter, row.currency) }).toEqual({
          user: i,
          when,
          balanceAfter: running[row.currency],
        });
        running[row.currency] -= toMinor(row.amount, row.currency);
      }
      expect({ user: i, when, opening: running }).toEqual({ user: i, when, opening: zero() });
    }),
  );
  saw('statement checked');
}

/**
 * The spend counters on the user's item (store/charges/payer.ts: `spendDay`/`spendMonth`, each of one
 * period) hold exactly what the model says that period's charges add up to: per currency, and
 * per agent for the charges its own counters counted. An internal invariant, read directly: a
 * counter that drifts (an agent's lowered by a hold it never counted) shows here at once, before
 * a charge happens to reach the limit it guards.
 */
async function checkSpendCounters(m: Model, user: number, when: string): Promise<void> {
  const u = m.users[user] as ModelUser;
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.user(u.id), ConsistentRead: true }));
  for (const [attr, kind] of [
    ['spendDay', 'day'],
    ['spendMonth', 'month'],
  ] as const) {
    const counters = out.Item?.[attr] as Record<string, unknown> | undefined;
    if (!counters) continue;
    const period = (kind === 'day' ? { day: String(counters.p) } : { month: String(counters.p) }) as { day: string } | { month: string };
    const actual: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    for (const c of CURRENCIES) {
      actual[c] = counters[c] ?? 0;
      expected[c] = spentIn(m, user, c, period);
      m.agents.forEach((a, agent) => {
        actual[`${c}#${a.id}`] = counters[`${c}#${a.id}`] ?? 0;
        expected[`${c}#${a.id}`] = spentIn(m, user, c, period, agent);
      });
    }
    expect({ when, user: u.id, [attr]: counters.p, counters: actual }).toEqual({
      when,
      user: u.id,
      [attr]: counters.p,
      counters: expected,
    });
  }
}

async function checkAgainstModel(m: Model, r: Real, when: string): Promise<void> {
  // The users, agents and grants are read in parallel (each request is independent); their checks are the same.
  const users = m.users.map(async (u) => {
    const res = await r.call<{ balances: unknown }>('GET', `/api/v1/admin/users/${u.id}`, { headers: r.admin });
    expect({ when, user: u.id, balances: res.body.balances }).toEqual({ when, user: u.id, balances: balancesJson(u.bal) });
    const me = await r.call<{ balances: unknown; held: unknown; policy: unknown }>('GET', '/api/v1/users/me', {
      headers: { 'x-user-key': u.key },
    });
    expect({ when, user: u.id, me: me.body }).toEqual({
      when,
      user: u.id,
      me: {
        id: u.id,
        balances: balancesJson(u.bal),
        held: balancesJson(u.held),
        // The model takes no top-up back (reversals have their own e2e, test/topups/reversals), so nothing is owed.
        owed: { USD: 0, USDC: 0 },
        policy: policyJson(u.policy, m.agents),
      },
    });
    await checkSpendCounters(m, m.users.indexOf(u), when);
  });
  const agents = m.agents.map(async (a) => {
    const h = { 'x-agent-key': a.key };
    const bal = await r.call<{ balances: unknown }>('GET', '/api/v1/agents/balance', { headers: h });
    expect({ when, agent: a.id, balances: bal.body.balances }).toEqual({ when, agent: a.id, balances: balancesJson(a.bal) });

    const listed = await r.call<{
      data: {
        idempotencyKey: string;
        status: string;
        amount: number;
        currency: Currency;
        refundedAmount: number;
        pendingReason: string | null;
      }[];
      pagination: { total: number };
    }>('GET', '/api/v1/agents/charges?limit=100', { headers: h });
    const actual = listed.body.data.map((c) => [c.idempotencyKey, c.status, c.amount, c.currency, c.refundedAmount, c.pendingReason]);
    const expected = [...a.charges]
      .reverse()
      .map((c) => [
        c.key,
        c.status,
        asJson(c.amount, c.currency),
        c.currency,
        asJson(c.refunded, c.currency),
        c.status === 'PENDING' ? (c.pendingReason ?? null) : null,
      ]);
    expect({ when, agent: a.id, total: listed.body.pagination.total, charges: actual }).toEqual({
      when,
      agent: a.id,
      total: a.charges.length,
      charges: expected,
    });

    const payouts = await r.call<{ payouts: { id: string; status: string; amount: number; currency: Currency }[] }>(
      'GET',
      '/api/v1/agents/withdraw?limit=100',
      {
        headers: h,
      },
    );
    const got = payouts.body.payouts.map((p) => [p.id, p.status, p.currency]);
    const want = [...a.payouts].reverse().map((p) => [p.id, p.status, p.currency]);
    expect({ when, agent: a.id, payouts: got }).toEqual({ when, agent: a.id, payouts: want });
  });

  // Each payout moved money at most once on its rail: exactly once when COMPLETED, never when FAILED.
  const paidPerPayout = new Map<string, number>();
  for (const tx of r.stack.rails.solana.landed()) {
    if (tx.err === null && tx.memo?.startsWith('payout:'))
      paidPerPayout.set(tx.memo.slice(7), (paidPerPayout.get(tx.memo.slice(7)) ?? 0) + 1);
  }
  for (const batch of r.stack.rails.paypal.batches()) {
    const paid = batch.items.filter((i) => i.status === 'SUCCESS').length;
    paidPerPayout.set(batch.senderBatchId, (paidPerPayout.get(batch.senderBatchId) ?? 0) + paid);
  }
  for (const a of m.agents) {
    for (const p of a.payouts) {
      const times = paidPerPayout.get(p.id) ?? 0;
      expect({ when, payout: p.id, status: p.status, paid: times }).toEqual({
        when,
        payout: p.id,
        status: p.status,
        paid: p.status === 'COMPLETED' ? 1 : 0,
      });
    }
  }

  // Each grant as its payer lists them (one page per payer): revoked or not, and spent = its SUCCESS charges and open holds.
  const grants = m.users.map(async (u, user) => {
    const mine = m.grants.flatMap((g, i) => (g.user === user ? [{ g, i }] : []));
    if (mine.length === 0) return;
    const res = await r.call<{ data: { id: string; status: string; spent: number }[] }>('GET', '/api/v1/users/me/grants?limit=100', {
      headers: { 'x-user-key': u.key },
    });
    expect({ when, user: u.id, grants: res.body.data.map((g) => [g.id, g.status, g.spent]) }).toEqual({
      when,
      user: u.id,
      // Newest first.
      grants: mine.reverse().map(({ g, i }) => [g.id, g.revoked ? 'revoked' : 'active', asJson(grantSpentOf(m, i), g.currency)]),
    });
    // A grant's hour counter (an internal invariant, read directly, as the payer's in checkSpendCounters):
    // exactly its charges counted in the counter's own hour.
    for (const { g, i } of mine.filter(({ g }) => g.hourly !== undefined)) {
      const item = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.grant(u.id, g.id), ConsistentRead: true }));
      const counter = item.Item?.spentHour as { p: string; v: number } | undefined;
      if (counter === undefined) continue;
      expect({ when, grant: g.id, spentHour: counter }).toEqual({
        when,
        grant: g.id,
        spentHour: { p: counter.p, v: grantHourSpentOf(m, i, counter.p) },
      });
    }
  });
  await Promise.all([...users, ...agents, ...grants]);

  const audit = await runLedgerAudit();
  if (!audit.ok) throw new Error(`${when}: ${formatAuditReport(audit)}`);
  if (audit.grants.checked === 0 && m.grants.length > 0) throw new Error(`${when}: the audit checked no grant`);
}

// ---- generators and runs ---------------------------------------------------------------------

const USERS = 3;
const AGENTS = 2;
const currency = fc.constantFrom<Currency>('USD', 'USDC');
const amountFor = (c: Currency) => (c === 'USD' ? fc.integer({ min: 1, max: 3_000 }) : fc.integer({ min: 1, max: 30_000_000 }));

const command: fc.Arbitrary<fc.AsyncCommand<Model, Real>> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.nat(USERS - 1), currency, fc.integer({ min: 1, max: 4_000 }))
      .map(([u, c, units]) => new Credit(u, c, units * (c === 'USD' ? 1 : 10_000))),
  },
  {
    weight: 6,
    arbitrary: currency.chain((c) =>
      fc
        .tuple(
          fc.nat(AGENTS - 1),
          fc.nat(USERS - 1),
          amountFor(c),
          fc.nat(29),
          fc.nat(2),
          fc.constantFrom<'none' | 'approval' | 'agentLimit'>('none', 'none', 'approval', 'agentLimit'),
          fc.constantFrom<'no' | 'short' | 'hour'>('no', 'no', 'no', 'short', 'hour'),
        )
        .map(([a, u, minor, k, d, aim, hold]) => new Charge(a, u, c, minor, k, d, aim, hold)),
    ),
  },
  // The charge lifecycle: capture (all, part, too much), release, refund (all, part, too much).
  { weight: 2, arbitrary: fc.tuple(fc.nat(50), fc.nat(8)).map(([i, part]) => new Capture(i, part === 0 ? 0 : part * 37)) },
  { weight: 1, arbitrary: fc.nat(50).map((i) => new Release(i)) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(50), fc.nat(6)).map(([i, part]) => new Refund(i, part === 0 ? 0 : part * 53)) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(AGENTS - 1), fc.nat(50)).map(([a, i]) => new ReplayCharge(a, i)) },
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        fc.nat(AGENTS - 1),
        currency,
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom<Outcome>('pays', 'refused', 'held-claimed', 'held-returned'),
      )
      .map(([a, c, units, o]) => new Withdraw(a, c, units, o)),
  },
  { weight: 1, arbitrary: fc.nat(AGENTS - 1).map((a) => new ReplayWithdraw(a)) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.nat(USERS - 1),
        fc.option(
          currency.chain((c) => {
            const unit = c === 'USD' ? 1 : 10_000;
            return fc.record(
              {
                currency: fc.constant(c),
                perCharge: fc.option(
                  fc.integer({ min: 500, max: 3_000 }).map((x) => x * unit),
                  { nil: undefined },
                ),
                daily: fc.option(
                  fc.integer({ min: 1_000, max: 8_000 }).map((x) => x * unit),
                  { nil: undefined },
                ),
                approvalAbove: fc.option(
                  fc.integer({ min: 200, max: 2_500 }).map((x) => x * unit),
                  { nil: undefined },
                ),
                // 60 s (the minimum) so charges can expire within a run; 900 s (the default) so most do not.
                approvalWindowSeconds: fc.constantFrom(60, 900),
                // One policy in four blocks an agent.
                blocked: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat(AGENTS - 1) }),
                // One policy in two gives an agent daily and/or monthly limits of its own, mostly
                // aimed at the agent of one of the user's open holds (a hold made before the limit).
                agentLimits: fc.option(
                  fc
                    .record({
                      agent: fc.nat(AGENTS - 1),
                      daily: fc.option(
                        fc.integer({ min: 300, max: 4_000 }).map((x) => x * unit),
                        { nil: undefined },
                      ),
                      monthly: fc.option(
                        fc.integer({ min: 1_000, max: 8_000 }).map((x) => x * unit),
                        { nil: undefined },
                      ),
                      aimAtOpenHold: fc.constantFrom(true, true, true, false),
                    })
                    .map((l) => (l.daily === undefined && l.monthly === undefined ? { ...l, daily: 1_000 * unit } : l)),
                  { nil: undefined, freq: 4 },
                ),
              },
              { requiredKeys: ['currency', 'approvalWindowSeconds', 'agentLimits'] },
            );
          }),
          { nil: undefined, freq: 5 },
        ),
      )
      .map(([u, p]) => new SetPolicy(u, p as ModelPolicy | undefined)),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.nat(50), fc.constantFrom<'approve' | 'decline'>('approve', 'approve', 'decline'))
      .map(([i, a]) => new Settle(i, a)),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.nat(50), fc.constantFrom<'approve' | 'decline'>('approve', 'decline'), fc.boolean())
      .map(([i, a, other]) => new SettleRefused(i, a, other)),
  },
  { weight: 2, arbitrary: fc.nat(50).map((i) => new Expire(i)) },
);

/**
 * The grant and x402 steps, generated after the steps above (so those are the same sequence for a
 * seed as before grants and x402 existed, and go down the same paths) and interleaved with them.
 */
const grantOrX402Command: fc.Arbitrary<fc.AsyncCommand<Model, Real>> = fc.oneof(
  // Grants: created with limits (amounts in USD cents, scaled for USDC), charged with their keys, revoked.
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.nat(USERS - 1),
        fc.nat(AGENTS - 1),
        currency,
        // perCharge above approvalAbove, so a charge aimed just above the threshold waits for approval.
        fc.option(fc.integer({ min: 1_000, max: 2_500 }), { nil: undefined }),
        fc.option(fc.integer({ min: 1_000, max: 6_000 }), { nil: undefined, freq: 5 }),
        fc.option(fc.integer({ min: 100, max: 900 }), { nil: undefined, freq: 3 }),
      )
      .map(([u, a, c, perCharge, total, approvalAbove]) => new CreateGrant(u, a, c, perCharge, total, approvalAbove)),
  },
  {
    weight: 5,
    arbitrary: currency.chain((c) =>
      fc
        .tuple(
          amountFor(c),
          fc.nat(29),
          fc.nat(2),
          fc.constantFrom<'no' | 'short' | 'hour'>('no', 'no', 'no', 'short', 'hour'),
          fc.nat(20),
          fc.constantFrom<'none' | 'total' | 'perCharge' | 'approval' | 'currency'>(
            'none',
            'none',
            'total',
            'total',
            'perCharge',
            'approval',
            'approval',
            'currency',
          ),
        )
        .map(([minor, k, d, hold, pick, aim]) => new Charge(0, 0, c, minor, k, d, 'none', hold, { pick, aim })),
    ),
  },
  { weight: 1, arbitrary: fc.tuple(fc.nat(20), fc.boolean()).map(([i, twice]) => new RevokeGrant(i, twice)) },
  // x402: an agent settles a payment (0.01 to 1 USDC, the stock client's cap); replays by it and by another agent.
  { weight: 2, arbitrary: fc.tuple(fc.nat(AGENTS - 1), fc.integer({ min: 1, max: 100 })).map(([a, cents]) => new X402Settle(a, cents)) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(20), fc.boolean()).map(([i, other]) => new X402Replay(i, other)) },
);

/**
 * The operator's steps on a disabled agent's money, generated after the two lists above (so those
 * stay the sequences a seed gave before), interleaved with the 70.
 */
const operatorCommand: fc.Arbitrary<fc.AsyncCommand<Model, Real>> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.nat(50), fc.nat(6), fc.boolean())
      .map(([i, part, disabled]) => new OperatorRefund(i, part === 0 ? 0 : part * 53, disabled)),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.nat(AGENTS - 1), currency, fc.integer({ min: 1, max: 3 }), fc.constantFrom<'cancel' | 'release'>('cancel', 'release'))
      .map(([a, c, units, action]) => new HeldPayout(a, c, units, action)),
  },
);

/**
 * x402 purchases, generated after the lists above (so those stay the sequences a seed gave before),
 * interleaved with the 70: purchases (a USDC grant's key or the payer's own), their payments landing,
 * payments never sent, replays.
 */
const purchaseCommand: fc.Arbitrary<fc.AsyncCommand<Model, Real>> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        fc.nat(20),
        fc.constantFrom(true, true, false),
        fc.integer({ min: 1, max: 300 }),
        fc.constantFrom<'none' | 'total' | 'approval'>('none', 'none', 'total', 'approval', 'approval'),
      )
      .map(([pick, viaGrant, cents, aim]) => new Purchase(pick, viaGrant, cents, aim)),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.nat(20), fc.constantFrom<'receipt' | 'reconciler'>('receipt', 'reconciler'))
      .map(([i, by]) => new PurchaseLands(i, by)),
  },
  { weight: 1, arbitrary: fc.constant(new PurchaseNeverSent()) },
  { weight: 1, arbitrary: fc.tuple(fc.nat(20), fc.boolean()).map(([i, changed]) => new ReplayPurchase(i, changed)) },
);

/**
 * Fixed steps after each run's generated ones (so those stay the sequences a seed gave), each
 * checked like them: they go down, in every run, the paths a run of the default size may miss. A
 * payer (the one with the most money) without a policy (approval above 1.00 first: a charge waits
 * and is declined); a grant of it with only an hourly limit (3.00): a charge under it (0.01), one a
 * cent past what is left of the hour (402), one in the other currency (400), one of exactly what is
 * left;
 * an x402 payment settled and the same payment settled by another agent; a purchase with the
 * payer's own key whose payment is never sent (released when the chain passes its blockhash).
 * Each step is made when it runs, from the model as it is then.
 */
function tailSteps(m: Readonly<Model>): ((m: Readonly<Model>) => fc.AsyncCommand<Model, Real>)[] {
  const worth = (u: ModelUser) => u.bal.USD + u.bal.USDC / 10_000;
  const user = m.users.reduce((best, u, i) => (worth(u) > worth(m.users[best] as ModelUser) ? i : best), 0);
  // Keys past the generated ones (0-29), so these are new requests, not replays.
  const grantCharge = (cents: number, keyNo: number, aim: 'none' | 'total' | 'currency') => (mm: Readonly<Model>) =>
    new Charge(0, user, 'USD', cents, keyNo, 0, 'none', 'no', { pick: mm.grants.length - 1, aim });
  return [
    () => new SetPolicy(user, { currency: 'USD', approvalAbove: 100, approvalWindowSeconds: 900 }),
    () => new Charge(0, user, 'USD', 500, 100, 0),
    (mm) => {
      const pending = allCharges(mm).filter(({ c }) => c.status === 'PENDING' && c.pendingReason === 'user_approval');
      return new Settle(
        Math.max(
          0,
          pending.findIndex(({ c, agent }) => agent === 0 && c.key === 'key-100'),
        ),
        'decline',
      );
    },
    () => new SetPolicy(user, undefined),
    // At most two other live grants, as the generated steps keep them.
    ...[0, 1, 2].map(
      () => (mm: Readonly<Model>) => (mm.grants.filter((g) => !g.revoked).length >= 3 ? new RevokeGrant(0, false) : new Noop()),
    ),
    () => new CreateGrant(user, 0, 'USD', undefined, undefined, undefined, 300),
    grantCharge(200, 101, 'none'),
    grantCharge(1, 102, 'total'),
    grantCharge(3, 103, 'currency'),
    grantCharge(2, 104, 'total'),
    () => new X402Settle(0, 5),
    (mm) => new X402Replay(mm.x402.length - 1, true),
    () => new Purchase(user, false, 5, 'none'),
    () => new PurchaseNeverSent(),
  ];
}

/** A step that does nothing (a tail step with nothing to do). */
class Noop implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(): Promise<void> {}
  toString = () => 'nothing';
}

/** `extra` steps inserted among `steps`, each after the step its position names. */
function interleave<T>(steps: readonly T[], extra: readonly (readonly [number, T])[]): T[] {
  const out: T[] = [];
  const sorted = [...extra].sort((a, b) => a[0] - b[0]);
  let next = 0;
  steps.forEach((step, i) => {
    out.push(step);
    while (next < sorted.length && (sorted[next] as readonly [number, T])[0] === i) out.push((sorted[next++] as readonly [number, T])[1]);
  });
  return out;
}

/** The kinds of command (class names) that ran at least once: every one must (see the test). */
const ran = new Set<string>();

/** Wraps each command so the model check runs after it, naming the step that broke it. */
class Checked implements fc.AsyncCommand<Model, Real> {
  constructor(readonly inner: fc.AsyncCommand<Model, Real>) {}
  check = (m: Readonly<Model>) => this.inner.check(m);
  async run(m: Model, r: Real): Promise<void> {
    m.log.push(this.inner.toString());
    ran.add(this.inner.constructor.name);
    await this.inner.run(m, r);
    await endPurchases(m, r);
    await checkAgainstModel(m, r, `after step ${m.log.length}: ${this.inner.toString()}`);
    // The statements every few steps (and at the end of each run): a full read of each payer's.
    if (m.log.length % STATEMENT_EVERY === 0) await checkStatements(m, r, `after step ${m.log.length}: ${this.inner.toString()}`);
  }
  toString = () => this.inner.toString();
}

async function freshWorld(r: Real, hourlies: readonly (number | undefined)[]): Promise<Model> {
  // Runs share the table: expire what an earlier run left PENDING, so the sweeper's figures in
  // this run are this run's alone (the longest window is 900 s; a day is past all of them).
  await expireDueCharges(new Date(Date.now() + 86_400_000));
  const users: ModelUser[] = [];
  for (let i = 0; i < USERS; i++) {
    // Users start with some money so charges, and then withdrawals, happen from the first steps;
    // the last one has little, so refusals for funds happen too.
    const units = i === USERS - 1 ? 5 : 150;
    const u = await r.fundedUser({ USD: String(units), USDC: String(units) });
    users.push({
      id: u.id,
      key: u.key,
      bal: { USD: units * 100, USDC: units * 1_000_000 },
      held: zero(),
      // fundedUser's operator credits, in that order.
      moves: [
        { type: 'credit', amount: units * 100, currency: 'USD' },
        { type: 'credit', amount: units * 1_000_000, currency: 'USDC' },
      ],
    });
  }
  const agents: ModelAgent[] = [];
  for (let i = 0; i < AGENTS; i++) {
    const a = await r.enabledAgent();
    const wallet = solanaWallet();
    r.stack.rails.solana.createTokenAccount(wallet); // the rail never creates it (docs/rails.md)
    agents.push({ id: a.id, key: a.key, wallet, bal: zero(), charges: [], payouts: [], fees: { USD: NO_FEE_BASIS, USDC: NO_FEE_BASIS } });
  }
  const model: Model = { users, agents, grants: [], x402: [], log: [], hourlies };
  // The second user starts under a policy, so approvals happen from the first steps too: its USD
  // charges above 15 wait for approval, within a 60 s window. (The first earns the agents USD to
  // withdraw; the third has little money: its charges are refused for funds.)
  await new SetPolicy(1, { currency: 'USD', approvalAbove: 1_500, approvalWindowSeconds: 60 }).run(model, r);
  // Each agent starts with 30 USD earned from the first user, so USD withdrawals (paid, refused,
  // held in flight) happen even though many USD charges now wait for approval.
  for (let i = 0; i < AGENTS; i++) await new Charge(i, 0, 'USD', 3_000, 29, 0).run(model, r);
  // The first user starts with a 20 USD hour-long hold by the first agent, made before the user gave
  // that agent a daily limit of its own (40 USD), and a 5 USD charge by it since, which the agent's
  // counter did count: however the hold ends (capture, release, expiry) it must not lower that counter.
  await new Charge(0, 0, 'USD', 2_000, 28, 0, 'none', 'hour').run(model, r);
  await new SetPolicy(0, { currency: 'USD', approvalWindowSeconds: 900, agentLimits: { agent: 0, daily: 4_000 } }).run(model, r);
  await new Charge(0, 0, 'USD', 500, 27, 0).run(model, r);
  // The first user gives the second agent a grant (25 USD a charge, 40 USD in all, approval above
  // 20), so grant charges happen from the first steps.
  await new CreateGrant(0, 1, 'USD', 2_500, 4_000, 2_000).run(model, r);
  return model;
}

const STEPS = 70;
/**
 * Grant and x402 steps added to each run, among the 70 (which stay the sequence this test ran
 * before grants and x402 for the same seed, so they go down the same paths).
 */
const EXTRA_STEPS = 14;
/** The operator's steps (held payouts, refunds of a disabled agent's charges) added to each run. */
const OPERATOR_STEPS = 5;
/** The x402 purchase steps added to each run. */
const PURCHASE_STEPS = 10;
/**
 * How many runs: LEDGER_MODEL_RUNS (MODEL_RUNS, its older name, too). CI's default is RUNS_DEFAULT,
 * which goes down every required path below and runs every kind of command; more runs go down
 * the same paths again with other data (LEDGER_MODEL_RUNS=3 is this test's earlier size).
 */
const RUNS_DEFAULT = 2;
const RUNS = Number(process.env.LEDGER_MODEL_RUNS ?? process.env.MODEL_RUNS ?? RUNS_DEFAULT);
const SEED = Number(process.env.MODEL_SEED ?? 20_261_121);
/** Every kind of command the runs generate: each must have run at least once. */
const COMMAND_KINDS = [
  Credit,
  Charge,
  Capture,
  Release,
  Refund,
  ReplayCharge,
  Withdraw,
  ReplayWithdraw,
  SetPolicy,
  Settle,
  SettleRefused,
  Expire,
  CreateGrant,
  RevokeGrant,
  X402Settle,
  X402Replay,
  OperatorRefund,
  HeldPayout,
  Purchase,
  PurchaseLands,
  PurchaseNeverSent,
  ReplayPurchase,
].map((kind) => kind.name);

describe('the service agrees with a model of its ledger', () => {
  it(`over ${RUNS} random runs of ${STEPS} steps, ${EXTRA_STEPS} grant and x402 steps, ${OPERATOR_STEPS} operator steps and ${PURCHASE_STEPS} purchase steps (seed ${SEED})`, async () => {
    let steps = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { minLength: STEPS, maxLength: STEPS }),
        fc.array(fc.tuple(fc.nat(STEPS - 1), grantOrX402Command), { minLength: EXTRA_STEPS, maxLength: EXTRA_STEPS }),
        fc.array(fc.tuple(fc.nat(STEPS - 1), operatorCommand), { minLength: OPERATOR_STEPS, maxLength: OPERATOR_STEPS }),
        fc.array(fc.tuple(fc.nat(STEPS - 1), purchaseCommand), { minLength: PURCHASE_STEPS, maxLength: PURCHASE_STEPS }),
        // The hourly limits of the grants the run creates (generated last, so the steps above stay the sequences a seed gave).
        fc.array(fc.option(fc.integer({ min: 500, max: 5_000 }), { nil: undefined, freq: 2 }), { minLength: 10, maxLength: 10 }),
        async (cmds, extra, operator, purchases, hourlies) => {
          const model = await freshWorld(t, hourlies);
          await fc.asyncModelRun(
            () => ({ model, real: t }),
            interleave(cmds, [...extra, ...operator, ...purchases]).map((c) => new Checked(c)),
          );
          for (const make of tailSteps(model)) {
            const step = make(model);
            if (step instanceof Noop) continue;
            // A step whose precondition does not hold is skipped, as fast-check skips generated ones.
            if (!step.check(model)) continue;
            await new Checked(step).run(model, t);
          }
          await checkStatements(model, t, 'at the end of the run');
          steps += model.log.length;
        },
      ),
      // Against a live stack shrinking would replay whole runs: report the failing run instead.
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    // Every run actually ran its steps (commands whose precondition fails are skipped), and the
    // runs went down every path that moves or refuses money.
    expect(steps).toBeGreaterThan(RUNS * (STEPS + EXTRA_STEPS + OPERATOR_STEPS + PURCHASE_STEPS) * 0.8);
    if (process.env.MODEL_SEED === undefined) {
      const required = [
        'charge 201',
        'charge 202',
        'charge 402',
        'charge 402 limit',
        'charge 403',
        'charge 422',
        'charge replay',
        'withdraw USD pays COMPLETED',
        'withdraw USD refused FAILED',
        'withdraw USD held-claimed COMPLETED',
        'withdraw USD held-returned FAILED',
        'withdraw USDC pays COMPLETED',
        'withdraw insufficient',
        'withdraw replay',
        'policy',
        'policy with a blocked agent',
        'policy with agent limits',
        'policy with agent limits over an open hold',
        'charge aimed at an agent limit',
        'charge 201 under an agent limit',
        'charge 402 under an agent limit',
        'policy cleared',
        'approve',
        'decline',
        'settle 404',
        'settle 409',
        'expire',
        'hold short',
        'hold hour',
        'capture part',
        'capture 409 charge is not pending',
        'release',
        'refund part',
        'refund rest',
        'refund 400',
        'refund 409',
        'grant created',
        'grant revoked',
        'grant charge 201',
        'grant charge 202',
        'grant charge 402 limit',
        'grant charge 401',
        'grant charge 400 currency',
        'grant created with an hourly limit',
        'grant charge 402 hourly limit',
        'grant charge made under an hourly limit',
        'x402 settle',
        'x402 replay',
        'x402 settle by another agent',
        'operator refund 200 of a disabled agent',
        'held payout cancel',
        'held payout release',
        // 'purchase 202' is not required: this seed's runs reach no USDC threshold a purchase can pass under (the
        // approval of a purchase has its own e2e, test/x402/purchases-stock.e2e.test.ts).
        'purchase 201',
        'purchase lands, captured by the receipt',
        'purchase lands, captured by the reconciler',
        'purchase expired',
        'purchase replay',
        'statement checked',
      ];
      const paths = Object.fromEntries([...seen.entries()].sort());
      expect({ missing: required.filter((path) => !seen.has(path)), paths }).toEqual({ missing: [], paths });
      // And every kind of command ran (a precondition that never held would skip a kind silently).
      expect({ kindsNotRun: COMMAND_KINDS.filter((kind) => !ran.has(kind)) }).toEqual({ kindsNotRun: [] });
    }
    // 59 s idle before issue 22; 286-307 s in loaded full runs after it (the checks after each step
    // list charges over 33 partitions and read 16 balance shards): 300 s was the edge, not a bound.
  }, 600_000);
});
