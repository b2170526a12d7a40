import { loadConfig } from '../config';
import { consoleLoginUrl, consoleSessionOf } from '../console/session';
import { httpHandler } from '../http/handler';
import { htmlErrorResponse } from '../http/page';
import { renderConsentPage } from '../pages/consent-page.view';
import * as NEEDS from '../registry/needs.generated';
import { showConsentPage } from '../use-cases/identity/grant-requests';

// The consent token's lookup is by hash; its grant's key is derived from the approval secret. The
// console's session cookie is named by the public base URL's scheme (docs/console.md).
loadConfig({ require: NEEDS.consentPage });

/** GET /consent/{token} — the consent page (HTML); the token is the only credential to see it, a console session lets the payer answer. */
export const handler = httpHandler(
  async (req) => {
    const page = await showConsentPage(req.params.token);
    const session = page.kind === 'request' ? await consoleSessionOf(req) : undefined;
    const viewer = session ? { signedIn: { csrfToken: session.csrfToken } } : { loginUrl: consoleLoginUrl(req.path) };
    return renderConsentPage(page, req.params.token, viewer);
  },
  { errors: htmlErrorResponse },
);
