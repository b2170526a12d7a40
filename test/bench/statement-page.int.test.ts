/**
 * DESIGN §26's budget for a page of the payer's statement, measured as the benchmark measures it
 * (test/bench/requests.ts `statementPageCost`, the rows behind `bench: statement page requests N`):
 * through the route's real handler inside a counting scope, a warm page sends at most 3 DynamoDB
 * requests — the balance's GetItem on the first page, then at most two Queries, even when a filter
 * matches nothing in a history longer than what the two read; a cursor page needs no GetItem.
 */
import { STATEMENT_ENDPOINT, statementPageRequests } from './cost';
import { statementPageCost } from './requests';
import { benchContextForTests } from './test-context';

const ctx = benchContextForTests();

const STATEMENT_BUDGET = 3;

describe("what a page of the payer's statement costs", () => {
  it('the balance once, then at most two Queries: 3 requests at most, filtered or not', async () => {
    const rows = await statementPageCost(ctx());
    expect(rows.map((q) => ({ endpoint: q.endpoint, case: q.case, state: q.state, status: q.status, dynamo: q.dynamo }))).toEqual([
      {
        endpoint: STATEMENT_ENDPOINT,
        case: 'page 1, limit 20',
        state: 'cold',
        status: 200,
        dynamo: { BatchGetItem: 1, GetItem: 1, Query: 1 },
      },
      { endpoint: STATEMENT_ENDPOINT, case: 'page 1, limit 20', state: 'warm', status: 200, dynamo: { GetItem: 1, Query: 1 } },
      { endpoint: STATEMENT_ENDPOINT, case: 'filtered, no row matches', state: 'warm', status: 200, dynamo: { GetItem: 1, Query: 2 } },
      { endpoint: STATEMENT_ENDPOINT, case: 'page 2 (cursor)', state: 'warm', status: 200, dynamo: { Query: 1 } },
    ]);
    expect(statementPageRequests(rows)).toBe(STATEMENT_BUDGET);
  });
});
