/**
 * The payer's statement as an operation (DESIGN §26, docs/statement.md): its own module, so the
 * function that serves it bundles this use case only (functions/operations/README.md: a module per use case).
 */

import { statementQuerySchema } from '../contracts/request.schemas';
import * as NEEDS from '../registry/needs.generated';
import { readStatement, type StatementPage, statementView } from '../use-cases/identity/statement';
import { operation } from './operation';

/** GET /api/v1/users/me/statement?currency=&type=&agentId=&from=&to=&q=&limit=&cursor=: x-user-key. */
export const userStatementOperation = operation({
  route: 'user-statement',
  needs: NEEDS.userStatement,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  query: statementQuerySchema,
  run: ({ caller: { userId }, query }) => readStatement(userId, query),
  render: (page: StatementPage) => ({ statusCode: 200, body: statementView(page) }),
});
