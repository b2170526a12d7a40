/**
 * What one x402 purchase (DESIGN §22) costs in DynamoDB, measured as the benchmark measures it
 * (test/bench/requests.ts `warmX402Purchase`, the row behind `bench: x402 purchase requests N reads
 * R wcu W`): a warm POST /api/v1/agents/x402/purchases under a grant key, below the approval
 * threshold, for a stock x402 seller's requirements on the local chain. The hold is the charge's
 * own one transaction (with its idempotency record and the grant's counters); the purchase builds
 * on the charge's outcome (the charge as written: never read back), and the signed payment is
 * recorded on it once.
 */

import { X402_PURCHASE_CASE, X402_PURCHASE_ENDPOINT } from './cost';
import { warmX402Purchase } from './requests';
import { benchContextForTests } from './test-context';

const ctx = benchContextForTests();

/**
 * As DynamoDB Local reports them (items of equal capacity in one transaction counted once,
 * test/bench/charge-items.int.test.ts): the hold's transaction 36, the payment's record 52. Both
 * write the charge item, which carries the accepted requirements and then the signed payment (so
 * a replay, a GET and the reconciler answer the one payment signed), with its two index entries
 * (the agent's purchases, the payer's history): more than a 1 KB item's units each. The record
 * also checks what a capture would (the agent enabled, not blocked, its grant active: +4), since
 * an approved purchase is signed long after its hold (test/security/x402-purchase-sign-after-revoke).
 */
const PURCHASE_UNITS = 88;

describe('what one x402 purchase costs', () => {
  it('the hold in one transaction, no read of it, the payment recorded in one write', async () => {
    const row = await warmX402Purchase(ctx());
    expect({
      endpoint: row.endpoint,
      case: row.case,
      status: row.status,
      dynamo: row.dynamo,
      reads: row.reads,
      writeUnits: row.writeUnits,
      sqs: row.sqs,
    }).toEqual({
      endpoint: X402_PURCHASE_ENDPOINT,
      case: X402_PURCHASE_CASE,
      status: 201,
      dynamo: { TransactWriteItems: 2 },
      reads: 0,
      writeUnits: PURCHASE_UNITS,
      sqs: 0,
    });
  });
});
