/**
 * Add funds (DESIGN §21, §13): a USDC top-up paid from a Solana wallet (a Solana Pay QR code and
 * its `solana:` link) or a USD top-up paid with PayPal (a link to PayPal's approval page: the
 * console's CSP `form-action 'self'` blocks a form post that redirects to PayPal), and the payer's
 * top-ups with their status. Opening a top-up is the API's `openTopup`, once per form key.
 */

import QRCode from 'qrcode';
import { StoredReply } from '../../contracts/api';
import { topupView } from '../../contracts/views';
import { CURRENCY_INFO, isCurrencyOn } from '../../core/money';
import { html, type SafeHtml } from '../../http/html';
import { refusalText } from '../../messages/catalogue';
import { runFor } from '../../operations/execute';
import { userCreateTopupJoining, userGetTopupOperation } from '../../operations/topups';
import { listMyTopups } from '../../use-cases/topups/topups';
import type { ConsolePage, ConsoleResult, ConsoleRoute, ConsoleSession } from '../page';
import { payerOf } from './caller';
import { once } from './once';
import {
  csrfField,
  FormCheck,
  type FormProblems,
  formField,
  money,
  notFound,
  onceField,
  page,
  problemSummary,
  refusal,
  tableRegion,
  when,
  zoneNote,
} from './ui';

type TopupView = ReturnType<typeof topupView>;
type Rail = 'USDC' | 'USD';

const FUNDS = '/console/funds';
const RECENT_TOPUPS = 20;
const LABELS = { amount: 'Amount' };

/** What the page was asked to show again: which form refused what, and the value the payer typed. */
interface Refused {
  rail: Rail;
  problems: FormProblems;
  amount: string;
}

const fundsPage: ConsolePage = async (session) => render(session);

async function render(session: ConsoleSession, refused?: Refused): Promise<ConsoleResult> {
  const list = { data: (await listMyTopups(session.userId, { limit: RECENT_TOPUPS })).topups.map(topupView) };
  const body = html`
<p>Add money to your balance. Agents can only spend what you add here, within the grants and limits you set.</p>
${topupForm(session, 'USDC', refused)}
${topupForm(session, 'USD', refused)}
<section aria-labelledby="topups-h">
<h2 id="topups-h">Your top-ups</h2>
${list.data.length === 0 ? html`<p class="empty">No top-ups yet. Choose an amount above: USDC from a Solana wallet, or USD with PayPal.</p>` : topupTable(list.data, session)}
</section>`;
  return page('Add funds', 'funds', body, refused?.problems.status ?? 200);
}

function topupForm(session: ConsoleSession, rail: Rail, refused: Refused | undefined): SafeHtml {
  const mine = refused?.rail === rail ? refused : undefined;
  const id = rail.toLowerCase();
  const heading = isCurrencyOn(rail, 'solana') ? 'USDC from a Solana wallet' : 'USD with PayPal';
  const hint = isCurrencyOn(rail, 'solana')
    ? 'You will get a Solana Pay QR code for exactly this amount. It is credited once the transfer is final on Solana.'
    : 'You will continue to PayPal to approve the payment. It is credited once PayPal completes it.';
  return html`
<section aria-labelledby="${id}-h">
<h2 id="${id}-h">${heading}</h2>
<form method="post" action="${FUNDS}/${id}" aria-labelledby="${id}-h" novalidate>
${csrfField(session)}${onceField()}
${problemSummary(mine?.problems, { amount: `${id}-amount` })}
${formField({
  id: `${id}-amount`,
  name: 'amount',
  label: 'Amount',
  unit: rail,
  hint: `${rail} amount, for example 25.00. ${hint}`,
  value: mine?.amount ?? '',
  problem: mine?.problems.fields.amount,
  attrs: html`inputmode="decimal" autocomplete="off" required`,
})}
<button type="submit">${isCurrencyOn(rail, 'solana') ? 'Create USDC top-up' : 'Continue to PayPal'}</button>
</form>
</section>`;
}

function topupTable(topups: TopupView[], session: ConsoleSession): SafeHtml {
  const rows = topups.map(
    (t) => html`<tr>
<td data-label="Created">${when(t.createdAt, session)}</td>
<td data-label="Method">${CURRENCY_INFO[t.currency].method}</td>
<td data-label="Amount" class="num">${t.amount === null ? 'any amount' : money(t.amount, t.currency)}</td>
<td data-label="Status"><span class="status status-${t.status.toLowerCase()}">${statusText(t)}</span></td>
<td class="action"><a href="${FUNDS}/topups/${t.id}">${t.status === 'PENDING' ? 'Pay' : 'Details'}<span class="visually-hidden"> top-up ${t.id}</span></a></td>
</tr>`,
  );
  return html`${tableRegion(
    'Your top-ups',
    html`<table>
<thead><tr><th scope="col">Created</th><th scope="col">Method</th><th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${rows}</tbody>
</table>`,
  )}${zoneNote(session)}`;
}

function statusText(t: TopupView): string {
  if (t.status === 'PENDING') return 'Waiting for payment';
  if (t.status === 'COMPLETED') return 'Completed';
  if (t.status === 'EXPIRED') return 'Expired';
  return t.failureReason ? `Failed: ${t.failureReason}` : t.status;
}

/** POST /console/funds/usdc and /console/funds/usd: open the top-up once, then show how to pay it. */
function create(rail: Rail): ConsolePage {
  return async (session, req) => {
    const typed = (req.form.amount ?? '').trim();
    const check = new FormCheck(req.form, { labels: LABELS });
    try {
      const amount = check.amount('amount', 'Amount');
      if (amount === undefined && !check.failed) check.note('amount', refusalText('consoleAmountRequired'));
      check.orRefuse();
      if (amount === undefined) throw new Error('unreachable: a missing amount was refused');
      const done = await once<string, { topupId: string }>(
        session,
        `topup-${rail}`,
        req.form,
        { currency: rail, amount: amount.value },
        async (record) => {
          const create = userCreateTopupJoining((view) => [record({ topupId: view.id })]);
          const opened = await runFor(create, payerOf(session), { body: { currency: rail, amount } });
          if (opened instanceof StoredReply) throw new Error('a top-up opened without a key answered a stored reply');
          return opened.id;
        },
      );
      const id = done.replayed ? done.stored.topupId : done.value;
      // Post/redirect/get: the top-up's own page shows the QR code or the PayPal link; a reload is harmless.
      return { kind: 'redirect', location: `${FUNDS}/topups/${encodeURIComponent(id)}` };
    } catch (error) {
      return render(session, { rail, problems: check.refused(error), amount: typed });
    }
  };
}

/** GET /console/funds/topups/:id: one of the payer's top-ups and how to pay it (404 for another payer's). */
const topupPage: ConsolePage = async (session, req) => {
  let topup: TopupView;
  try {
    const found = await runFor(userGetTopupOperation, payerOf(session), { params: { id: req.params.id } });
    if (found instanceof StoredReply) throw new Error('a top-up read answered a stored reply');
    topup = topupView(found);
  } catch (error) {
    if (refusal(error).status === 404) return notFound('funds', 'Top-up', { href: FUNDS, label: 'Back to Add funds' });
    throw error;
  }
  const amount = topup.amount === null ? undefined : money(topup.amount, topup.currency);
  const title = `${topup.currency} top-up${amount ? ` of ${amount}` : ''}`;
  return page(
    title,
    'funds',
    html`
<dl class="facts">
<dt>Status</dt><dd>${statusText(topup)}</dd>
<dt>Amount</dt><dd>${amount ?? 'what your wallet sends'}</dd>
<dt>Created</dt><dd>${when(topup.createdAt, session)}</dd>
${topup.status === 'PENDING' ? html`<dt>Pay before</dt><dd>${when(topup.expiresAt, session)}</dd>` : html``}
${topup.completedAt ? html`<dt>Completed</dt><dd>${when(topup.completedAt, session)}</dd>` : html``}
</dl>
${topup.status === 'PENDING' ? await howToPay(topup, amount) : html``}
${zoneNote(session)}
<p><a href="${FUNDS}">Back to Add funds</a></p>`,
  );
};

async function howToPay(topup: TopupView, amount: string | undefined): Promise<SafeHtml> {
  if ('solanaPayUrl' in topup) {
    // A data: URL (the CSP allows `img-src data:`): nothing leaves for a third-party QR service.
    const qr = await QRCode.toDataURL(topup.solanaPayUrl, { errorCorrectionLevel: 'M', margin: 2, width: 256 });
    return html`
<section aria-labelledby="pay-h">
<h2 id="pay-h">Pay with a Solana wallet</h2>
<p>Scan the code with a wallet that supports Solana Pay (Phantom, Solflare, …) and send ${amount ?? 'USDC'}. Only USDC on Solana is credited.</p>
<img class="qr" src="${qr}" width="256" height="256" alt="QR code: Solana Pay request for ${amount ?? 'USDC'} to your balance">
<p>Or open this link in your wallet:</p>
<p class="mono"><a href="${topup.solanaPayUrl}">${topup.solanaPayUrl}</a></p>
<p class="hint">Your balance is credited automatically once the transfer is final, usually within a minute. This page does not update by itself: reload it to see the status.</p>
</section>`;
  }
  return html`
<section aria-labelledby="pay-h">
<h2 id="pay-h">Approve the payment at PayPal</h2>
<p>PayPal asks you to sign in and approve ${amount}. Your balance is credited once PayPal completes the payment.</p>
<p><a class="button" href="${topup.approveUrl}" rel="noopener noreferrer">Pay ${amount} with PayPal</a></p>
<p class="hint">Changed your mind? Do nothing: the top-up expires by itself and no money moves.</p>
</section>`;
}

export const FUNDS_ROUTES: readonly ConsoleRoute[] = [
  { method: 'GET', path: FUNDS, page: fundsPage },
  { method: 'POST', path: `${FUNDS}/usdc`, page: create('USDC') },
  { method: 'POST', path: `${FUNDS}/usd`, page: create('USD') },
  { method: 'GET', path: `${FUNDS}/topups/:id`, page: topupPage },
];
