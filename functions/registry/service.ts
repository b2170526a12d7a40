/**
 * The service's own routes in the operation registry (routes.ts assembles the areas): the front page,
 * health and the OpenAPI document. Each entry carries its operation.
 */
import { healthBody, openApiDocumentBody } from '../contracts/response.schemas';
import { refusalText as msg } from '../messages/catalogue';
import { uses } from '../store/access';
import { errors, ok } from './doc';
import type { DocumentedRoute } from './spec';

/** The service itself: its front page, its health and this document. */
export const SERVICE_ROUTES = [
  // A person who opens the service's address gets a page, not a JSON 404 (DESIGN §24); touches nothing.
  {
    name: 'home',
    method: 'GET',
    path: '/',
    public: true,
    table: {},
    operation: () => ({
      summary: 'The front page',
      description:
        "An HTML page for a person who opens the service's address: what it is, and links to the console, this document and " +
        "`/health`. Static, no JavaScript, the pages' Content-Security-Policy.",
      tag: 'Service',
      security: [],
      responses: {
        200: { description: 'The page.', contentType: 'text/html' },
      },
    }),
  },
  {
    name: 'health',
    method: 'GET',
    path: '/health',
    public: true,
    table: uses('pingTable'),
    operation: () => ({
      summary: 'Health',
      description: 'A strongly consistent read of the table.',
      tag: 'Service',
      security: [],
      responses: {
        200: ok('The table answers.', healthBody, { status: 'ok' }),
        503: errors('The table does not answer.', [msg('tableUnreachable')], ['Retry-After']),
      },
    }),
  },
  // Serves docs/openapi.json as committed; touches nothing.
  {
    name: 'openapi',
    method: 'GET',
    path: '/api/v1/openapi.json',
    public: true,
    table: {},
    operation: () => ({
      summary: 'This document',
      tag: 'Service',
      security: [],
      responses: {
        200: { description: 'The OpenAPI 3.1 document of this API (docs/openapi.json).', schema: openApiDocumentBody },
      },
    }),
  },
] as const satisfies readonly DocumentedRoute[];
