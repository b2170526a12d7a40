/**
 * A movement's receipt in the console (DESIGN §27: "the console's Statement links each row's
 * receipt"). A browser cannot send the API's `x-user-key`, so the console reads it for the signed-in
 * payer through the API's own operation (`GET /api/v1/receipts/{id}`, `runFor` with the session's
 * payer): the same record, the same party check, the same 404 for anything not theirs or not settled
 * yet. The page shows what the receipt says (its payload, which this service has just signed) and
 * the compact JWS itself, selectable and with `Copy`, for anyone the payer hands it to: they verify
 * it with the keys at `/.well-known/jwks.json` (docs/receipts.md), not with this page's word.
 */
import { html, type SafeHtml } from '../../http/html';
import { isRefusal } from '../../messages/refusal';
import { runFor } from '../../operations/execute';
import { getReceiptOperation } from '../../operations/receipts';
import { copyButton } from '../copy';
import type { ConsolePage, ConsoleRoute } from '../page';
import { payerOf } from './caller';
import { money, page, when } from './ui';

export const RECEIPTS = '/console/receipts';
/** The Statement's path (pages/statement.ts links here; this page links back without importing it). */
const STATEMENT = '/console/statement';

/** The link of the receipt `id` names (a movement's id; `<chargeId>.refund` for a charge's refunds). */
export const consoleReceiptHref = (id: string): string => `${RECEIPTS}/${encodeURIComponent(id)}`;

interface Payload {
  type: string;
  id: string;
  amount: string;
  currency: string;
  payer: { kind: string; id: string };
  payee: { kind: string; id: string };
  status: string;
  settledAt: string;
  grantId?: string;
  transaction?: string;
  resource?: string;
}

const TYPE_WORDS: Readonly<Record<string, string>> = {
  charge: 'Charge',
  x402_purchase: 'x402 purchase',
  x402_payment: 'x402 payment',
  refund: 'Refund',
  payout: 'Payout',
  topup: 'Top-up',
};

/** The receipt's status, as a person reads it (the JWS keeps the API's word). */
const STATUS_WORDS: Readonly<Record<string, string>> = { SUCCESS: 'Paid', COMPLETED: 'Completed', CREDITED: 'Credited' };

/** core/receipts.ts's party kinds, in words. */
const KIND_WORDS: Readonly<Record<string, string>> = {
  user: 'Payer',
  agent: 'Agent',
  balance: 'Balance of',
  solana: 'Solana wallet',
  paypal: 'PayPal receiver',
};

/**
 * A party as a person reads it: `You` when it is the signed-in payer (whose id they never type);
 * anyone else by what they are and their id, which is what the signed payload names (a name would
 * be this page's word, not the receipt's).
 */
const party = (x: { kind: string; id: string }, me: string): SafeHtml =>
  x.id === me && (x.kind === 'user' || x.kind === 'balance')
    ? html`${x.kind === 'user' ? 'You' : 'Your balance'} <span class="muted mono wrap">(${x.id})</span>`
    : html`${KIND_WORDS[x.kind] ?? x.kind} <span class="mono wrap">${x.id}</span>`;

/** The payload of a compact JWS this service has just signed and handed back (its middle part). */
const payloadOf = (jws: string): Payload => JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString('utf8')) as Payload;

const receiptPage: ConsolePage = async (session, req) => {
  const id = req.params.id ?? '';
  let signed: { id: string; receipt: string };
  try {
    signed = (await runFor(getReceiptOperation, payerOf(session), { params: { id } })) as { id: string; receipt: string };
  } catch (error) {
    if (!isRefusal(error, 'receiptNotFound')) throw error;
    return page(
      'No receipt',
      'statement',
      html`<p>There is no receipt with this id for your account yet. A movement gets its receipt when it settles: a hold once it is captured, a top-up once it is paid.</p>
<p><a href="${STATEMENT}">Back to the statement</a></p>`,
      404,
    );
  }
  const p = payloadOf(signed.receipt);
  const body = html`<p>A receipt is this service's signed statement of a settled movement. Anyone you give it to can check it with the public keys at <a href="/.well-known/jwks.json">/.well-known/jwks.json</a>; a changed character makes it fail.</p>
<dl class="facts">
<dt>What</dt><dd>${TYPE_WORDS[p.type] ?? p.type}</dd>
<dt>Amount</dt><dd><strong>${money(p.amount, p.currency)}</strong></dd>
<dt>Status</dt><dd>${STATUS_WORDS[p.status] ?? p.status}</dd>
<dt>Settled</dt><dd>${when(p.settledAt, session)}</dd>
<dt>Paid by</dt><dd>${party(p.payer, session.userId)}</dd>
<dt>Paid to</dt><dd>${party(p.payee, session.userId)}</dd>
${p.grantId ? html`<dt>Grant</dt><dd class="mono">${p.grantId}</dd>` : html``}
${p.transaction ? html`<dt>Transaction</dt><dd class="mono wrap">${p.transaction}</dd>` : html``}
${p.resource ? html`<dt>Resource</dt><dd class="wrap">${p.resource}</dd>` : html``}
<dt>Id</dt><dd class="mono wrap">${p.id}</dd>
</dl>
<div class="field secret">
<label for="receipt-jws">The receipt (compact JWS)</label>
<textarea id="receipt-jws" rows="8" readonly spellcheck="false">${signed.receipt}</textarea>
</div>
${copyButton('receipt-jws', 'the receipt')}
<p class="actions"><a class="button" href="${STATEMENT}">Back to the statement</a></p>`;
  return page('Receipt', 'statement', body);
};

export const RECEIPT_ROUTES: readonly ConsoleRoute[] = [{ method: 'GET', path: `${RECEIPTS}/:id`, page: receiptPage }];
