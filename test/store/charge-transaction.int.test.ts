/**
 * The items of a charge's one TransactWriteItems, pinned: for each kind of charge (plain, under a
 * policy's limits, waiting for approval, a hold, under a grant, a grant's hold and approval, an
 * x402 purchase's hold, and each refusal that keeps a FAILED record), the use case is run against
 * DynamoDB Local and every transaction it sends is captured at the client, normalised (ids, times,
 * periods, TTLs and the random shard become placeholders, numbered by first appearance so an id
 * shared by two items stays shared) and compared with test/store/charge-transaction.golden.json.
 *
 * The golden file was recorded from the code before the charge's items were built in one place
 * (store/charges/charge-items.ts): a refactor of how the items are built must leave every item, key,
 * condition, value and meaning-bearing ReturnValues exactly as it was. Record again only for a
 * change that means to alter the transaction: `RECORD_GOLDEN=1 npx jest <this file>`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { PurchaseTerms } from '../../functions/core/purchases';
import type { TransactItem } from '../../functions/store/transact';
import type { CreateChargeInput } from '../../functions/use-cases/charges/charges';
import { testAgent } from '../support/agents';
import { createCharge } from '../support/answers';
import { normalised, recordTransactions, seedGrant, seedPayer } from '../support/golden-transactions';
import { createTestTable } from '../support/table';

const GOLDEN = path.join(__dirname, 'charge-transaction.golden.json');
const RECORD = process.env.RECORD_GOLDEN === '1';

let recorder: ReturnType<typeof recordTransactions>;
beforeAll(async () => {
  await createTestTable();
  recorder = recordTransactions('captureChargeTransactions');
});

const payer = seedPayer;
const grantFor = seedGrant;

let seq = 0;
/** Runs one charge request; the transactions it sent and the status it answered. */
async function charge(
  agentId: string,
  userId: string,
  request: Partial<CreateChargeInput> & { amount: number },
): Promise<{ status: number; transactions: TransactItem[][] }> {
  recorder.take();
  const result = await createCharge({
    agent: { id: agentId, keyHash: `test-key-hash-${agentId}`, name: 'bot' },
    userId,
    userKeyHash: `hash-${userId}`,
    idempotencyKey: `charge-${++seq}`,
    baseUrl: 'https://pay.example.com',
    currency: 'USD',
    description: `pinned ${seq}`,
    ...request,
  }).catch((error: { status?: number; statusCode?: number }) => ({ statusCode: error.status ?? error.statusCode ?? 500 }));
  const transactions = recorder.take();
  return { status: result.statusCode, transactions };
}

const purchaseTerms: PurchaseTerms = {
  requirements: {
    scheme: 'exact',
    network: 'solana:test',
    asset: 'USDCmint1111111111111111111111111111111111',
    amount: '2500000',
    payTo: 'seller1111111111111111111111111111111111111',
    maxTimeoutSeconds: 60,
    extra: { feePayer: 'facilitator11111111111111111111111111111111' },
  },
  resource: { url: 'https://seller.example.com/report' },
};

describe('the items of a charge’s transaction', () => {
  it('are exactly those pinned for every kind of charge and refusal', async () => {
    const agent = (await testAgent()).id;
    const cases: Record<string, { status: number; transactions: TransactItem[][] }> = {};

    const plainPayer = await payer({ USD: 10_000 });
    cases['plain charge, cold counters'] = await charge(agent, plainPayer, { amount: 100 });
    cases['plain charge, warm counters'] = await charge(agent, plainPayer, { amount: 200 });

    const limited = await payer(
      { USD: 10_000 },
      { daily: { USD: 5000 }, monthly: { USD: 9000 }, perCharge: { USD: 2000 }, agents: { [agent]: { daily: { USD: 3000 } } } },
    );
    cases['policy limits, cold counters'] = await charge(agent, limited, { amount: 100 });
    cases['policy limits, warm counters'] = await charge(agent, limited, { amount: 300 });
    cases['refused: over the policy per charge'] = await charge(agent, limited, { amount: 2500 });

    const approving = await payer({ USD: 10_000 }, { approvalAbove: { USD: 500 }, approvalWindowSeconds: 600 });
    cases['waits for the payer’s approval'] = await charge(agent, approving, { amount: 1000 });

    const holding = await payer({ USD: 10_000 });
    cases.hold = await charge(agent, holding, { amount: 700, capture: false, holdSeconds: 600 });
    cases['hold, warm counters'] = await charge(agent, holding, { amount: 800, capture: false });

    const blocking = await payer({ USD: 10_000 }, { agents: { [agent]: { blocked: true } } });
    cases['refused: agent blocked'] = await charge(agent, blocking, { amount: 100 });

    const poor = await payer({ USD: 50 });
    cases['refused: insufficient balance'] = await charge(agent, poor, { amount: 100 });

    const granting = await payer({ USD: 10_000 });
    const grant = await grantFor(granting, agent, { limits: { daily: 5000, monthly: 8000, total: 9000, perCharge: 2000 } });
    const grantCall = { grant, userKeyHash: `grant-hash-${grant.grantId}` };
    cases['grant charge, cold periods'] = await charge(agent, granting, { amount: 100, ...grantCall });
    cases['grant charge, warm periods'] = await charge(agent, granting, { amount: 200, ...grantCall });
    cases['grant hold'] = await charge(agent, granting, { amount: 300, capture: false, holdSeconds: 120, ...grantCall });
    cases['refused: over the grant per charge'] = await charge(agent, granting, { amount: 2500, ...grantCall });

    const grantApproving = await payer({ USD: 10_000 });
    const approvalGrant = await grantFor(grantApproving, agent, { limits: {}, approvalAbove: 500 });
    cases['grant charge waits for approval'] = await charge(agent, grantApproving, {
      amount: 900,
      grant: approvalGrant,
      userKeyHash: `grant-hash-${approvalGrant.grantId}`,
    });

    const buying = await payer({ USDC: 10_000_000 });
    cases['x402 purchase hold'] = await charge(agent, buying, {
      amount: 2_500_000,
      currency: 'USDC',
      description: 'x402: https://seller.example.com/report',
      capture: false,
      holdSeconds: 300,
      purchase: { terms: purchaseTerms },
    });

    const pinned = normalised(Object.values(cases).map((c) => c.transactions));
    const shown = Object.fromEntries(
      Object.keys(cases).map((name, i) => [name, { status: cases[name]?.status, transactions: (pinned as unknown[])[i] }]),
    );
    if (RECORD) writeFileSync(GOLDEN, `${JSON.stringify(shown, null, 2)}\n`);
    expect(shown).toEqual(JSON.parse(readFileSync(GOLDEN, 'utf8')));
  });
});
