/**
 * The console's Lambda (DESIGN §21): every `/console` request, GET or POST, in one function with
 * its own throttle and grants (functions/api/routes.ts `console`, `console-pages`), through the
 * one HTTP layer (functions/http/): its request adapter, middleware and response writer. API
 * Gateway's payload 2.0 gives cookies as `cookies` (the request adapter puts them back in the
 * Cookie header) and takes the answer's `cookies` back as Set-Cookie headers.
 */
import { httpHandler } from '../http/handler';
import { htmlErrorResponse } from '../http/page';
import { serveConsole } from './router';

// Its configuration (the relying party and the only Origin accepted come from PUBLIC_BASE_URL; Add
// funds opens top-ups; Developers seals webhook secrets) is checked at init by the route's own
// handler files, functions/api/console*.handler.ts, from the registry's needs. The router answers
// its own errors as console pages; the HTML renderer is the middleware's last word on anything else.
export const handler = httpHandler(serveConsole, { errors: htmlErrorResponse });
