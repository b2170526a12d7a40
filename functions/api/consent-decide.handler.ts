import { loadConfig } from '../config';
import { consoleLoginUrl, consoleSessionOf, signedInFormValid } from '../console/session';
import { CONSENT_FORM_MAX_BYTES, consentFormSchema } from '../contracts/grants';
import { parseFormBody } from '../http/body';
import { httpHandler } from '../http/handler';
import { htmlErrorResponse } from '../http/page';
import { refuse } from '../messages/refusal';
import { renderConsentPage } from '../pages/consent-page.view';
import * as NEEDS from '../registry/needs.generated';
import { openerStands, sessionAccountKeyHash } from '../use-cases/identity/console-sessions';
import { decideOnConsentPage } from '../use-cases/identity/grant-requests';

// Allow derives the grant's key from the approval secret; a signed-in payer's form is checked against the console's origin.
loadConfig({ require: NEEDS.consentDecide });

/**
 * POST /consent/{token} — the consent form (`action=allow|deny`, and `accountKey`, or `csrf` of a
 * payer signed in to the console); 303 back to the page, or the page again with 400. A form with
 * `csrf` is decided as the session's payer only with the session's token and the console's Origin:
 * 403 otherwise, nothing changed.
 */
export const handler = httpHandler(
  async (req) => {
    const form = parseFormBody(req, consentFormSchema, CONSENT_FORM_MAX_BYTES);
    if (form.csrf !== undefined) {
      const session = await consoleSessionOf(req);
      if (!session || !signedInFormValid(req, session, form.csrf)) throw refuse('consoleFormRefused');
      // What opened the session must still stand (DESIGN §24): a rotated key's or a removed passkey's session decides nothing.
      if (!(await openerStands(session))) throw refuse('consoleFormRefused');
      const accountKeyHash = sessionAccountKeyHash(session);
      const page = await decideOnConsentPage(req.params.token, form, {
        userId: session.userId,
        ...(accountKeyHash ? { accountKeyHash } : {}),
      });
      return renderConsentPage(page, req.params.token, { signedIn: { csrfToken: session.csrfToken } });
    }
    return renderConsentPage(await decideOnConsentPage(req.params.token, form), req.params.token, { loginUrl: consoleLoginUrl(req.path) });
  },
  { errors: htmlErrorResponse },
);
