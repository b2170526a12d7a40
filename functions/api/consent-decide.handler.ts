import { loadConfig, NEEDS_APPROVAL_SECRET } from '../config';
import { CONSENT_FORM_MAX_BYTES, consentFormSchema } from '../contracts/grants';
import { parseFormBody } from '../http/body';
import { httpHandler } from '../http/handler';
import { renderConsentPage } from '../pages/consent-page.view';
import { htmlErrorResponse } from '../pages/html';
import { decideOnConsentPage } from '../use-cases/grant-requests';

// Allow derives the grant's key from the approval secret.
loadConfig({ require: NEEDS_APPROVAL_SECRET });

/** POST /consent/{token} — the consent form (`action=allow|deny`, `accountKey`); 303 back to the page, or the page again with 400. */
export const handler = httpHandler(
  async (req) => {
    const form = parseFormBody(req, consentFormSchema, CONSENT_FORM_MAX_BYTES);
    return renderConsentPage(await decideOnConsentPage(req.params.token, form), req.params.token);
  },
  { errors: htmlErrorResponse },
);
