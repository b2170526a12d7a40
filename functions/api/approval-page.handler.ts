import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import { htmlErrorResponse } from '../http/page';
import { approvalPageAnswer } from '../pages/approval-page.view';
import * as NEEDS from '../registry/needs.generated';
import { showApprovalPage } from '../use-cases/charges/approval-page';

// The link's token is checked against the approval secret.
loadConfig({ require: NEEDS.approvalPage });

/** GET /approve/{token} — the approval page (HTML); the token is the only credential. */
export const handler = httpHandler(async (req) => approvalPageAnswer(await showApprovalPage(req.params.token)), {
  errors: htmlErrorResponse,
});
