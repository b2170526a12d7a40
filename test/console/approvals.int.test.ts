/**
 * The console's Approvals (DESIGN §21) against DynamoDB Local: Approve redirects with the charge's
 * notice, and a refusal is shown in a payer's words chosen by its catalogue code (never by its text).
 */
import { LosslessNumber } from 'lossless-json';
import { APPROVAL_ROUTES } from '../../functions/console/own/approvals.page';
import type { ConsoleResult } from '../../functions/console/page';
import { policySchema } from '../../functions/contracts/request.schemas';
import { validate } from '../../functions/contracts/validation';
import { setPolicy } from '../../functions/use-cases/identity/payers';
import { BASE_URL, bodyOf, charge, consolePagesEnv, credit, newAgent, newPayer, type Payer } from './pages/support';

consolePagesEnv();

const route = (method: 'GET' | 'POST', path: string) => {
  const found = APPROVAL_ROUTES.find((r) => r.method === method && r.path === path);
  if (!found) throw new Error(`no route ${method} ${path}`);
  return found.page;
};

const decide = (payer: Payer, id: string, action: 'approve' | 'decline'): Promise<ConsoleResult> =>
  route('POST', `/console/approvals/:id/${action}`)(payer.session, {
    method: 'POST',
    path: `/console/approvals/${id}/${action}`,
    params: { id },
    query: {},
    form: {},
    baseUrl: BASE_URL,
    now: new Date(),
  });

describe('Approvals', () => {
  it('approves a charge that waits, with the charge’s notice; a second decision is refused in the payer’s words, with its status', async () => {
    const payer = await newPayer();
    await credit(payer, '50', 'USD');
    await setPolicy(payer.userId, validate(policySchema, { approvalAbove: { USD: new LosslessNumber('1') } }));
    const made = await charge(await newAgent('Waiting Bot'), payer, '5', 'USD', 'needs approval');
    expect(made.statusCode).toBe(202);
    // The use case answers with the object or with its JSON bytes (rawBody), as idempotentCommand kept it.
    const id = ((made.body ?? JSON.parse(made.rawBody ?? '{}')) as { id: string }).id;

    expect(await decide(payer, id, 'approve')).toEqual({ kind: 'redirect', location: '/console/approvals?done=approved' });
    const again = await decide(payer, id, 'decline');
    expect(again).toMatchObject({ kind: 'page', status: 409 });
    expect(bodyOf(again)).toContain('This charge has already been decided.');
  });

  it('says an unknown charge is not waiting, by its code', async () => {
    const payer = await newPayer();
    const result = await decide(payer, 'c01jz0000000000000000000000a01jz0000000000000000000000', 'approve');
    expect(result).toMatchObject({ kind: 'page', status: 404 });
    expect(bodyOf(result)).toContain('There is no such charge waiting for you.');
  });
});
