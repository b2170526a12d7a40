/**
 * What a payer reaches by a link, in the operation registry (routes.ts assembles the areas): the
 * approval page, an agent's grant requests and the consent page. Each entry carries its OpenAPI operation.
 */
import { createGrantRequestSchema } from '../contracts/grants';
import { grantRequestBody } from '../contracts/responses/grants';
import { refusalText as msg } from '../messages/catalogue';
import { AUTH_MESSAGES } from '../messages/credentials';
import { combine, uses } from '../store/access';
import { BODY_ERRORS, BUSY, EXAMPLE_GRANT, errors, IDEMPOTENCY_ERRORS, invalid, num, ok } from './doc';
import type { DocumentedRoute } from './spec';
import { APPROVAL_PAGE, APPROVE, DECLINE, ISSUE_GRANT, READ_GRANT_REQUEST, REQUEST_GRANT } from './tables';

const EXAMPLE_GRANT_REQUEST = {
  id: 'gr01jhx3k6v1f8q2n7c9m4p5r6s7',
  status: 'pending',
  consentUrl: 'https://pay.example.com/consent/3q2-7wVb8yZJm3S0wXH1z2yQf0nU5cN6kLrTtE4pA9s',
  expiresAt: '2026-01-15T09:45:00.000Z',
  grant: null,
};

/** What a payer reaches by a link: the approval page, an agent's grant requests and their consent page. */
export const LINK_ROUTES = [
  // The approval page (HTML, docs/approvals.md): the link's token is its only credential.
  {
    name: 'approval-page',
    method: 'GET',
    path: '/approve/{token}',
    public: true,
    table: APPROVAL_PAGE,
    approvalSecret: true,
    operation: () => ({
      summary: 'The approval page',
      description:
        "An HTML page at a PENDING charge's approvalUrl: the agent, amount, description and time left, with Approve and Decline " +
        'buttons (a plain form: no JavaScript needed). The token in the path is the only authority; after a decision, or once ' +
        'expired, the page shows the final state. Strict Content-Security-Policy, no external assets.',
      tag: 'Users',
      security: [],
      pathParams: { token: 'The capability from approvalUrl.' },
      responses: {
        200: { description: 'The page.', contentType: 'text/html' },
        404: { description: 'The link is not valid.', contentType: 'text/html' },
        503: { description: 'Busy; try again.', contentType: 'text/html' },
      },
    }),
  },
  {
    name: 'approval-decide',
    method: 'POST',
    path: '/approve/{token}',
    public: true,
    // A refused approval is answered with the page saying why (its reads).
    table: combine(APPROVE, DECLINE, APPROVAL_PAGE),
    approvalSecret: true,
    operation: () => ({
      summary: 'Approve or decline from the approval page',
      description: "The page's form post (`action=approve|decline`, form-encoded); answers 303 back to the page, which shows the outcome.",
      tag: 'Users',
      security: [],
      pathParams: { token: 'The capability from approvalUrl.' },
      responses: {
        303: { description: 'Back to the page, which shows the final state.' },
        400: { description: 'The form is not a single `action` of approve or decline.', contentType: 'text/html' },
        404: { description: 'The link is not valid.', contentType: 'text/html' },
        413: { description: 'The form is too large.', contentType: 'text/html' },
        415: { description: 'Not a form post.', contentType: 'text/html' },
        503: { description: 'Busy; try again.', contentType: 'text/html' },
      },
    }),
  },
  // Grant requests (docs/grants.md): the agent asks, the payer consents on the consent page.
  {
    name: 'agent-create-grant-request',
    method: 'POST',
    path: '/api/v1/agents/grant-requests',
    table: REQUEST_GRANT,
    approvalSecret: true,
    publicLinks: true,
    operation: () => ({
      summary: 'Ask a payer for a grant',
      description:
        'A pending request for a grant of these terms, living 15 minutes. Give `consentUrl` to the payer: they allow it (with ' +
        "their account key, on the service's own page) or deny it. Poll `GET /api/v1/agents/grant-requests/{id}`.",
      tag: 'Agents',
      security: [['agentKey']],
      idempotent: true,
      body: {
        name: 'CreateGrantRequestRequest',
        schema: createGrantRequestSchema,
        example: { currency: 'USD', limits: { perCharge: 5, total: 20 }, ttlSeconds: 86400 },
      },
      responses: {
        201: ok('The pending request and its consent link.', grantRequestBody, EXAMPLE_GRANT_REQUEST, ['Idempotent-Replayed']),
        400: errors('An invalid field, or no Idempotency-Key.', [
          msg('missingIdempotencyKey'),
          invalid(createGrantRequestSchema, { currency: 'EUR' }),
          invalid(createGrantRequestSchema, { currency: 'USD', ttlSeconds: num('59') }),
        ]),
        401: errors('The agent key is missing or unknown, or the agent is disabled.', [msg(AUTH_MESSAGES.grantRequests)]),
        ...IDEMPOTENCY_ERRORS,
        ...BODY_ERRORS,
        503: BUSY,
      },
    }),
  },
  {
    name: 'agent-get-grant-request',
    method: 'GET',
    path: '/api/v1/agents/grant-requests/{id}',
    table: READ_GRANT_REQUEST,
    approvalSecret: true,
    publicLinks: true,
    operation: () => ({
      summary: 'A grant request',
      description:
        'Once the payer allowed it, the first read answers `grant` with its `key` and moves the request to `claimed`; later ' +
        'reads show the grant without the key.',
      tag: 'Agents',
      security: [['agentKey']],
      pathParams: { id: 'The grant request id.' },
      responses: {
        200: ok('The request as it is now.', grantRequestBody, {
          ...EXAMPLE_GRANT_REQUEST,
          status: 'claimed',
          grant: { ...EXAMPLE_GRANT, key: 'ug_live_3Jc7QxWbR5tKp9ZsL3vC8mYdE4gF6jA1uBo' },
        }),
        401: errors('The agent key is missing or unknown, or the agent is disabled.', [msg(AUTH_MESSAGES.grantRequests)]),
        404: errors("No such request, or another agent's.", [msg('grantRequestNotFound')]),
        503: BUSY,
      },
    }),
  },
  // The consent page (HTML): the link's token shows it; Allow takes the payer's account key.
  {
    name: 'consent-page',
    method: 'GET',
    path: '/consent/{token}',
    public: true,
    // A payer signed in to the console answers without a key (DESIGN §21): the session read.
    table: uses('findConsent', 'getGrantRequest', 'getAgentById', 'readConsoleSession'),
    approvalSecret: true,
    publicLinks: true,
    operation: () => ({
      summary: 'The consent page',
      description:
        "An HTML page at a grant request's consentUrl: the agent's name and website, the currency, limits, lifetime and " +
        'description, a password field for the account key, and Allow / Deny (a plain form: no JavaScript needed). Once ' +
        'decided or expired it shows the final state. Strict Content-Security-Policy, no external assets.',
      tag: 'Users',
      security: [],
      pathParams: { token: 'The capability from consentUrl.' },
      responses: {
        200: { description: 'The page.', contentType: 'text/html' },
        404: { description: 'The link is not valid.', contentType: 'text/html' },
        503: { description: 'Busy; try again.', contentType: 'text/html' },
      },
    }),
  },
  {
    name: 'consent-decide',
    method: 'POST',
    path: '/consent/{token}',
    public: true,
    table: combine(
      uses(
        'findConsent',
        'getGrantRequest',
        'userKeyLookup',
        'decideGrantRequest',
        'readConsoleSession',
        'getUserKeyHash',
        'confirmSessionOpener',
      ),
      ISSUE_GRANT,
    ),
    approvalSecret: true,
    publicLinks: true,
    operation: () => ({
      summary: 'Allow or deny on the consent page',
      description:
        "The page's form post (`action=allow|deny`, `accountKey`, form-encoded). Allow with the payer's account key creates the " +
        'grant for that payer; answers 303 back to the page, which shows the outcome.',
      tag: 'Users',
      security: [],
      pathParams: { token: 'The capability from consentUrl.' },
      responses: {
        303: { description: 'Back to the page, which shows the final state.' },
        400: { description: 'The page again with "invalid account key" (nothing changed), or a malformed form.', contentType: 'text/html' },
        404: { description: 'The link is not valid.', contentType: 'text/html' },
        409: { description: 'The page again: the payer has 100 active grants.', contentType: 'text/html' },
        413: { description: 'The form is too large.', contentType: 'text/html' },
        415: { description: 'Not a form post.', contentType: 'text/html' },
        503: { description: 'Busy; try again.', contentType: 'text/html' },
      },
    }),
  },
] as const satisfies readonly DocumentedRoute[];
