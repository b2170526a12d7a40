import { loadConfig } from '../config';
import { APPROVAL_FORM_MAX_BYTES, approvalDecisionSchema } from '../contracts/approval-page.schema';
import { parseFormBody } from '../http/body';
import { httpHandler } from '../http/handler';
import { htmlErrorResponse } from '../http/page';
import { approvalDecisionAnswer } from '../pages/approval-page.view';
import * as NEEDS from '../registry/needs.generated';
import { decideOnApprovalPage } from '../use-cases/charges/approval-page';

// The link's token is checked against the approval secret.
loadConfig({ require: NEEDS.approvalDecide });

/** POST /approve/{token} — the approval page's form (`action=approve|decline`); answers 303 to the page. */
export const handler = httpHandler(
  async (req) => {
    const { action } = parseFormBody(req, approvalDecisionSchema, APPROVAL_FORM_MAX_BYTES);
    return approvalDecisionAnswer(await decideOnApprovalPage(req.params.token, action));
  },
  { errors: htmlErrorResponse },
);
