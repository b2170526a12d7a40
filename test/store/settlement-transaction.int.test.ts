/**
 * The items of a settlement's one TransactWriteItems, pinned, the way the charge's are
 * (test/store/charge-transaction.int.test.ts): every way a PENDING charge ends or advances — the
 * payer's approval (a plain charge, a grant's, a hold's), decline and release; the agent's capture
 * (full and partial, plain and under a grant) and release; the sweeper's expiry; an x402
 * purchase's capture and release on the chain's word — and each refusal that reaches the
 * transaction (a capture of a blocked agent, an approval under a revoked grant, a give-back whose
 * counters were not as assumed, which takes more rounds). Each is run through its use case
 * against DynamoDB Local; every transaction it sends is captured at the client, normalised, and
 * compared with test/store/settlement-transaction.golden.json.
 *
 * The golden file was recorded from the code before a settlement's items were built in one place
 * (store/charges/settlement-items.ts): a refactor of how the items are built must leave every item, key,
 * condition, value and meaning-bearing ReturnValues exactly as it was. Record again only for a
 * change that means to alter the transaction: `RECORD_GOLDEN=1 npx jest <this file>`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import type { AgentRef } from '../../functions/core/agents';
import { chargeIdOfPurchase, type PurchaseTerms, type SignedPurchase } from '../../functions/core/purchases';
import { userApproveChargeOperation } from '../../functions/operations/payers';
import { pendingOf } from '../../functions/store/charges/charge-pending.repository';
import { getCharge } from '../../functions/store/charges/charge-read.repository';
import { db } from '../../functions/store/client';
import { revokeGrant } from '../../functions/store/identity/grant.repository';
import { replacePolicy } from '../../functions/store/identity/user.repository';
import { keys } from '../../functions/store/table';
import type { TransactItem } from '../../functions/store/transact';
import { recordSignedPurchase } from '../../functions/store/x402-purchases/purchase.repository';
import type { CreateChargeInput } from '../../functions/use-cases/charges/charges';
import { expireDueCharges } from '../../functions/use-cases/charges/expiry';
import { approveCharge, declineCharge, releaseMyCharge } from '../../functions/use-cases/identity/payers';
import { reportReceipt } from '../../functions/use-cases/x402-purchases/purchases';
import type { PurchaseChain } from '../../functions/x402/purchase-chain';
import { testAgent } from '../support/agents';
import { captureCharge, createCharge, releaseCharge } from '../support/answers';
import { normalised, recordTransactions, seedGrant, seedPayer } from '../support/golden-transactions';
import { createTestTable } from '../support/table';

const GOLDEN = path.join(__dirname, 'settlement-transaction.golden.json');
const RECORD = process.env.RECORD_GOLDEN === '1';

let recorder: ReturnType<typeof recordTransactions>;
beforeAll(async () => {
  await createTestTable();
  recorder = recordTransactions('captureSettlementTransactions');
});

const payer = seedPayer;

async function grantFor(userId: string, agentId: string, terms: { limits: Record<string, number>; approvalAbove?: number }) {
  const key = await seedGrant(userId, agentId, terms);
  return { key, call: { grant: key, userKeyHash: `grant-hash-${key.grantId}` } };
}

let seq = 0;
/** Makes a charge (its transactions are not this test's) and returns its id. */
async function charge(agent: AgentRef, userId: string, request: Partial<CreateChargeInput> & { amount: number }): Promise<string> {
  const result = await createCharge({
    agent: { id: agent.id, keyHash: agent.keyHash, name: 'bot' },
    userId,
    userKeyHash: `hash-${userId}`,
    idempotencyKey: `charge-${++seq}`,
    baseUrl: 'https://pay.example.com',
    currency: 'USD',
    description: `settled ${seq}`,
    ...request,
  });
  const { body, rawBody } = result as { body?: unknown; rawBody?: string };
  const { id } = (body ?? JSON.parse(rawBody ?? '{}')) as { id: string };
  if (!id) throw new Error(`no charge: ${result.statusCode} ${rawBody ?? JSON.stringify(body)}`);
  return chargeIdOfPurchase(id) ?? id;
}

interface Case {
  status: number;
  transactions: TransactItem[][];
}

/** Runs one settlement; the transactions it sent and the status it answered. */
/** The receipt's use case answers the purchase; its route answers it 200. */
const answered200 = async (...args: Parameters<typeof reportReceipt>) => ({ statusCode: 200, purchase: await reportReceipt(...args) });

async function settled(run: () => Promise<{ statusCode: number }>): Promise<Case> {
  recorder.take();
  const result = await run().catch((error: { status?: number; statusCode?: number }) => ({
    statusCode: error.status ?? error.statusCode ?? 500,
  }));
  return { status: result.statusCode, transactions: recorder.take() };
}

/** An operator's edit of a counter (below what a hold gives back): the give-back's first round misses it. */
async function setCounter(key: Record<string, string>, path: string, value: number): Promise<void> {
  const [map, field] = path.split('.') as [string, string];
  await db().send(
    new UpdateCommand({
      TableName: config().TABLE_NAME,
      Key: key,
      UpdateExpression: 'SET #m.#f = :v',
      ExpressionAttributeNames: { '#m': map, '#f': field },
      ExpressionAttributeValues: { ':v': value },
    }),
  );
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

const TRANSACTION = '5VfYmGBsB9R5qQ3Ls8GkPuBdHLv7Y1z3JxVb2WcKeTnQpHrM4tAaS6dXyZ8uEhFj9gNk2LwCq7oPmR3sTvU1iBxD';
const landed = (err: unknown): PurchaseChain =>
  ({ landedAs: async (transaction: string) => ({ transaction, err }) }) as unknown as PurchaseChain;

/** An x402 purchase's hold, signed (its payment built: only the chain ends it now). */
async function signedPurchase(agent: AgentRef, userId: string): Promise<string> {
  const chargeId = await charge(agent, userId, {
    amount: 2_500_000,
    currency: 'USDC',
    description: 'x402: https://seller.example.com/report',
    capture: false,
    holdSeconds: 300,
    purchase: { terms: purchaseTerms },
  });
  const held = await getCharge(agent.id, chargeId);
  if (!held) throw new Error('no purchase hold');
  const now = new Date();
  const signed: SignedPurchase = {
    signedAt: now.toISOString(),
    paymentPayload: { x402Version: 2, payload: { transaction: 'AQID' } },
    // Each purchase's message is its own (one signature claims one purchase).
    authoritySignature: `Sig${++seq}`.padEnd(88, '1'),
    blockhash: 'Blockhash111111111111111111111111111111111',
    lastValidBlockHeight: 1000,
    memo: 'memo',
  };
  await recordSignedPurchase(pendingOf(held), signed, new Date(now.getTime() + 300_000).toISOString(), now);
  return `xp${chargeId.slice(1)}`;
}

/** The payer's answers here are rendered for their status only: links on the charges' address. */
const LINKS = { baseUrl: 'https://pay.example.com' };

describe('the items of a settlement’s transaction', () => {
  it('are exactly those pinned for every way a PENDING charge ends or advances, and each refusal', async () => {
    const agent = await testAgent();
    const cases: Record<string, Case> = {};
    const capture = (chargeId: string, amount?: string) =>
      settled(() =>
        captureCharge({
          agent,
          chargeId,
          idempotencyKey: `capture-${++seq}`,
          baseUrl: 'https://pay.example.com',
          ...(amount === undefined ? {} : { amount }),
        }),
      );
    const release = (chargeId: string) => settled(() => releaseCharge({ agent, chargeId, idempotencyKey: `release-${++seq}` }));

    // The sweeper first: each sweep finds only its one charge due.
    const expiring = await payer({ USD: 10_000 });
    const expiringHold = await charge(agent, expiring, { amount: 400, capture: false, holdSeconds: 60 });
    cases['expiry by the sweeper'] = await settled(async () => {
      const report = await expireDueCharges(new Date(Date.now() + 3_600_000));
      return { statusCode: report.expired === 1 ? 200 : 500 };
    });
    const expiringGrant = await payer({ USD: 10_000 });
    const { call: expiringCall } = await grantFor(expiringGrant, agent.id, { limits: { daily: 5000 } });
    await charge(agent, expiringGrant, { amount: 500, capture: false, holdSeconds: 60, ...expiringCall });
    cases['expiry by the sweeper, grant hold'] = await settled(async () => {
      const report = await expireDueCharges(new Date(Date.now() + 3_600_000));
      return { statusCode: report.expired === 1 ? 200 : 500 };
    });
    cases['refused: release after the sweeper expired it'] = await release(expiringHold);

    const approving = await payer({ USD: 10_000 }, { approvalAbove: { USD: 500 }, approvalWindowSeconds: 600 });
    const approved = await charge(agent, approving, { amount: 1000 });
    cases['payer approves a charge'] = await settled(() =>
      approveCharge(approving, approved).then((c) => userApproveChargeOperation.render(c, LINKS)),
    );
    const declined = await charge(agent, approving, { amount: 900 });
    cases['payer declines a charge'] = await settled(() =>
      declineCharge(approving, declined).then((c) => userApproveChargeOperation.render(c, LINKS)),
    );
    const releasedByPayer = await charge(agent, approving, { amount: 800 });
    cases['payer releases a charge awaiting approval'] = await settled(() =>
      releaseMyCharge(approving, releasedByPayer).then((c) => userApproveChargeOperation.render(c, LINKS)),
    );
    const approvedHold = await charge(agent, approving, { amount: 1200, capture: false, holdSeconds: 600 });
    cases['payer approves a hold'] = await settled(() =>
      approveCharge(approving, approvedHold).then((c) => userApproveChargeOperation.render(c, LINKS)),
    );
    cases['agent captures the approved hold'] = await capture(approvedHold);

    const grantApproving = await payer({ USD: 10_000 });
    const { key: approvalGrant, call: approvalCall } = await grantFor(grantApproving, agent.id, {
      limits: { daily: 5000, total: 9000 },
      approvalAbove: 500,
    });
    const grantApproved = await charge(agent, grantApproving, { amount: 900, ...approvalCall });
    cases['payer approves a grant charge'] = await settled(() =>
      approveCharge(grantApproving, grantApproved).then((c) => userApproveChargeOperation.render(c, LINKS)),
    );
    const grantHoldApproval = await charge(agent, grantApproving, { amount: 700, capture: false, holdSeconds: 600, ...approvalCall });
    cases['payer approves a grant hold'] = await settled(() =>
      approveCharge(grantApproving, grantHoldApproval).then((c) => userApproveChargeOperation.render(c, LINKS)),
    );

    const holding = await payer({ USD: 10_000 });
    cases['agent captures a hold in full'] = await capture(await charge(agent, holding, { amount: 700, capture: false, holdSeconds: 600 }));
    cases['agent captures a hold in part'] = await capture(await charge(agent, holding, { amount: 700, capture: false }), '2.50');
    cases['agent releases a hold'] = await release(await charge(agent, holding, { amount: 600, capture: false }));
    const holdReleasedByPayer = await charge(agent, holding, { amount: 500, capture: false });
    cases['payer releases a hold'] = await settled(() =>
      releaseMyCharge(holding, holdReleasedByPayer).then((c) => userApproveChargeOperation.render(c, LINKS)),
    );
    cases['refused: capture of more than was held'] = await capture(await charge(agent, holding, { amount: 300, capture: false }), '5.00');

    const granting = await payer({ USD: 10_000 });
    const { key: grant, call: grantCall } = await grantFor(granting, agent.id, {
      limits: { daily: 5000, monthly: 8000, total: 9000, perCharge: 2000 },
    });
    cases['agent captures a grant hold in full'] = await capture(
      await charge(agent, granting, { amount: 300, capture: false, holdSeconds: 120, ...grantCall }),
    );
    cases['agent captures a grant hold in part'] = await capture(
      await charge(agent, granting, { amount: 400, capture: false, ...grantCall }),
      '1.50',
    );
    cases['agent releases a grant hold'] = await release(await charge(agent, granting, { amount: 350, capture: false, ...grantCall }));

    // Counters an operator lowered below what goes back: each item's failed condition shows its counters for the next round.
    const edited = await charge(agent, granting, { amount: 450, capture: false, ...grantCall });
    await setCounter(keys.user(granting), 'spendDay.USD', 100);
    await setCounter(keys.grant(granting, grant.grantId), 'spentDay.v', 100);
    cases['agent releases a grant hold whose counters an operator lowered (a round more per item)'] = await release(edited);

    const revokedHold = await charge(agent, granting, { amount: 250, capture: false, ...grantCall });
    const revokedApproval = await charge(agent, grantApproving, { amount: 600, ...approvalCall });
    await revokeGrant(granting, grant.grantId, new Date(), () => []);
    cases['refused: capture under a revoked grant'] = await capture(revokedHold);
    await revokeGrant(grantApproving, approvalGrant.grantId, new Date(), () => []);
    cases['refused: approval under a revoked grant'] = await settled(() =>
      approveCharge(grantApproving, revokedApproval).then((c) => userApproveChargeOperation.render(c, LINKS)),
    );

    const blocking = await payer({ USD: 10_000 });
    const blockedHold = await charge(agent, blocking, { amount: 200, capture: false });
    await replacePolicy(blocking, { agents: { [agent.id]: { blocked: true } } });
    cases['refused: capture after the payer blocked the agent'] = await capture(blockedHold);
    cases['agent releases a hold of a payer who blocked it'] = await release(blockedHold);

    const buying = await payer({ USDC: 10_000_000 });
    const bought = await signedPurchase(agent, buying);
    cases['x402 purchase captured on the chain’s word'] = await settled(() =>
      answered200(agent.id, bought, { transaction: TRANSACTION }, async () => landed(null)),
    );
    const failed = await signedPurchase(agent, buying);
    cases['x402 purchase released: its transfer failed on chain'] = await settled(() =>
      answered200(agent.id, failed, { transaction: TRANSACTION }, async () => landed({ InstructionError: [0, 'Custom'] })),
    );

    const pinned = normalised(Object.values(cases).map((c) => c.transactions));
    const shown = Object.fromEntries(
      Object.keys(cases).map((name, i) => [name, { status: cases[name]?.status, transactions: (pinned as unknown[])[i] }]),
    );
    if (RECORD) writeFileSync(GOLDEN, `${JSON.stringify(shown, null, 2)}\n`);
    expect(shown).toEqual(JSON.parse(readFileSync(GOLDEN, 'utf8')));
  });
});
