import { loadConfig, NEEDS_APPROVAL_SECRET } from '../config';
import { httpHandler } from '../http/handler';
import { renderConsentPage } from '../pages/consent-page.view';
import { htmlErrorResponse } from '../pages/html';
import { showConsentPage } from '../use-cases/grant-requests';

// The consent token's lookup is by hash; its grant's key is derived from the approval secret.
loadConfig({ require: NEEDS_APPROVAL_SECRET });

/** GET /consent/{token} — the consent page (HTML); the token is the only credential to see it. */
export const handler = httpHandler(async (req) => renderConsentPage(await showConsentPage(req.params.token), req.params.token), {
  errors: htmlErrorResponse,
});
