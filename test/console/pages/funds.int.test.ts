/**
 * Add funds (DESIGN §21, §13) against DynamoDB Local and the PayPal imitation: the page, a USDC
 * top-up's Solana Pay QR code and link, a USD top-up's PayPal link, once per form key, refusals
 * that change nothing, and another payer's top-up refused.
 */
import { listMyTopups } from '../../../functions/use-cases/topups/topups';
import { bodyOf, consolePagesEnv, expectCsrfInEveryPostForm, get, newPayer, onceKeyOf, type Payer, post, statusOf } from './support';

const paypal = consolePagesEnv({ paypal: true });

const topupsOf = async (payer: Payer) => (await listMyTopups(payer.userId, {})).topups;

describe('Add funds', () => {
  it('renders both forms with their exact labels, the CSRF token and a fresh one-time key each time', async () => {
    const payer = await newPayer();
    const first = bodyOf(await get(payer, '/console/funds'));
    expect(first).toContain('<label for="usdc-amount">Amount</label>');
    expect(first).toContain('<label for="usd-amount">Amount</label>');
    expect(first).toContain('>Create USDC top-up</button>');
    expect(first).toContain('>Continue to PayPal</button>');
    expect(first).toContain('No top-ups yet.');
    expectCsrfInEveryPostForm(first, payer.session);
    const again = bodyOf(await get(payer, '/console/funds'));
    expect(onceKeyOf(again, '/console/funds/usdc')).not.toBe(onceKeyOf(first, '/console/funds/usdc'));
  });

  it('opens a USDC top-up once on a double submit and shows its QR code and solana: link', async () => {
    const payer = await newPayer();
    const form = { amount: '25', idempotencyKey: onceKeyOf(bodyOf(await get(payer, '/console/funds')), '/console/funds/usdc') };
    const [a, b] = await Promise.all([post(payer, '/console/funds/usdc', form), post(payer, '/console/funds/usdc', form)]);
    const c = await post(payer, '/console/funds/usdc', form);
    expect(a.kind).toBe('redirect');
    expect(b).toEqual(a);
    expect(c).toEqual(a);
    const topups = await topupsOf(payer);
    expect(topups).toHaveLength(1);
    const location = a.kind === 'redirect' ? a.location : '';
    expect(location).toBe(`/console/funds/topups/${topups[0]?.id}`);

    const shown = bodyOf(await get(payer, location));
    expect(shown).toMatch(
      /<img class="qr" src="data:image\/png;base64,[A-Za-z0-9+/=]+"[^>]* alt="QR code: Solana Pay request for 25\.00 USDC/,
    );
    expect(shown).toMatch(/>solana:[1-9A-HJ-NP-Za-km-z]+\?amount=25&amp;spl-token=/);
    expect(shown).toContain('Waiting for payment');
    // The list shows it too.
    expect(bodyOf(await get(payer, '/console/funds'))).toContain('25.00 USDC');
  });

  it('opens a USD top-up once and links to PayPal’s approval page (a link, not a form post)', async () => {
    const payer = await newPayer();
    const form = { amount: '10.5', idempotencyKey: onceKeyOf(bodyOf(await get(payer, '/console/funds')), '/console/funds/usd') };
    const a = await post(payer, '/console/funds/usd', form);
    const b = await post(payer, '/console/funds/usd', form);
    expect(b).toEqual(a);
    expect(await topupsOf(payer)).toHaveLength(1);
    const shown = bodyOf(await get(payer, a.kind === 'redirect' ? a.location : ''));
    const sandbox = paypal();
    const link = /<a class="button" href="([^"]+)"[^>]*>(Pay 10\.50 USD with PayPal)<\/a>/.exec(shown);
    expect(link?.[1]?.startsWith(sandbox?.url ?? 'none')).toBe(true);
    expect(link?.[2]).toContain('PayPal');
  });

  it.each([
    ['', 'Amount is required'],
    ['abc', 'Amount must be a number such as 25 or 25.50'],
    ['-5', 'Amount must be a number such as 25 or 25.50'],
    ['0', 'Amount must be greater than 0'],
    ['1.001', 'Amount'],
    ['1e3', 'Amount must be a number such as 25 or 25.50'],
  ])('refuses the USD amount %p with 400, the form again and nothing opened', async (amount, message) => {
    const payer = await newPayer();
    const form = { amount, idempotencyKey: onceKeyOf(bodyOf(await get(payer, '/console/funds')), '/console/funds/usd') };
    const answer = await post(payer, '/console/funds/usd', form);
    expect(statusOf(answer)).toBe(400);
    const markup = bodyOf(answer);
    expect(markup).toContain('role="alert"');
    expect(markup).toContain(message);
    expect(markup).toContain('aria-invalid="true"');
    expect(markup).toContain('>Continue to PayPal</button>');
    expect(await topupsOf(payer)).toEqual([]);
  });

  it('refuses a submit without its one-time key (400), opening nothing', async () => {
    const payer = await newPayer();
    const answer = await post(payer, '/console/funds/usdc', { amount: '5' });
    expect(statusOf(answer)).toBe(400);
    expect(bodyOf(answer)).toContain('this form has expired');
    expect(await topupsOf(payer)).toEqual([]);
  });

  it('shows another payer’s top-up as 404, and an id that is none', async () => {
    const owner = await newPayer();
    const intruder = await newPayer();
    const form = { amount: '5', idempotencyKey: onceKeyOf(bodyOf(await get(owner, '/console/funds')), '/console/funds/usdc') };
    const made = await post(owner, '/console/funds/usdc', form);
    const location = made.kind === 'redirect' ? made.location : '';
    const seen = await get(intruder, location);
    expect(statusOf(seen)).toBe(404);
    expect(bodyOf(seen)).not.toContain('solana:');
    expect(statusOf(await get(intruder, '/console/funds/topups/not-an-id'))).toBe(404);
    // The same key on the other payer's session is its own: the scope is the payer.
    const theirs = await post(intruder, '/console/funds/usdc', form);
    expect(theirs.kind).toBe('redirect');
    expect(theirs).not.toEqual(made);
  });
});
