/**
 * What `GET /` shows a person who opens the service's address (DESIGN §24: it was a JSON 404): what
 * this is, and links to the console, the API's document and /health. Static: it reads nothing. The
 * links are relative, so they hold wherever the API is mounted (a stage path, a CDN prefix).
 */
import type { ApiResult } from '../contracts/api';
import { html } from '../http/html';
import { htmlPage } from '../http/page';

const HOME = htmlPage(
  200,
  'Agent Payment Service',
  html`<h1>Agent Payment Service</h1>
<p>Prepaid balances in USD and USDC that agents charge within their payers' limits, withdrawals to Solana and PayPal, and x402 both ways.</p>
<nav aria-label="Where to go">
<ul>
<li><a href="console">The console</a>: payers sign up, sign in, top up, approve charges and give agents grants.</li>
<li><a href="api/v1/openapi.json">The API</a>: its OpenAPI 3.1 document, every endpoint with its answers and errors. The guides are in the repository's <code>docs/</code> folder, starting with <code>README.md</code>.</li>
<li><a href="health">Health</a>: 200 <code>{"status":"ok"}</code> while the service and its table answer.</li>
</ul>
</nav>`,
);

/** GET /'s answer: the same page for everyone. */
export function homePage(): ApiResult {
  return { ...HOME, headers: { ...HOME.headers } };
}
