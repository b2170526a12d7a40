/**
 * Builds docs/openapi.json (OpenAPI 3.1) from the operation registry: each route's entry carries its
 * operation (functions/registry/*.ts). The request schemas are the zod schemas the handlers validate
 * with (their input side), the answers the zod schemas in contracts/response.schemas.ts. `npm run openapi`
 * writes it; a unit test fails when the committed file differs from what this builds.
 */
import * as z from 'zod';
import { COMPONENTS, component } from '../../contracts/response.schemas';
import { refusalText } from '../../messages/catalogue';
import { MISSING_KEY_HEADER } from '../../messages/credentials';
import { type Credential, errors, type OperationDoc, type ResponseDoc, type ResponseHeader, UNMATCHED_ROUTE } from '../../registry/doc';
import { ROUTES, type RouteSpec } from '../../registry/routes';

export const OPENAPI_VERSION = '3.1.0';
/** The interface version of docs/spec.md. */
export const API_VERSION = '1.0.0';

type Json = Record<string, unknown>;

const SECURITY_SCHEMES: Record<Credential, Json> = {
  agentKey: { type: 'apiKey', in: 'header', name: 'x-agent-key', description: 'The agent key (`ag_live_…`) from registration.' },
  userKey: { type: 'apiKey', in: 'header', name: 'x-user-key', description: 'The user key (`uk_live_…`) authorizing a charge.' },
  adminKey: {
    type: 'apiKey',
    in: 'header',
    name: 'x-admin-key',
    description: 'The operator key: `npm start`, and stages deployed with adminAuth `key`.',
  },
  adminSigV4: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description:
      'AWS Signature Version 4 (service `execute-api`), where the stage authorizes the admin routes with IAM (production and ' +
      'staging by default; docs/deploy.md "Admin access"): the signer needs `execute-api:Invoke` on them (the stack output ' +
      '`AdminApiPolicyArn`). API Gateway checks both before the service runs and answers a refused request itself: 403 ' +
      '`{"message": "Forbidden"}`. x-admin-key is then ignored. `npm run admin -- --api <url>` signs.',
  },
  agentBearer: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'ag_live_…',
    description: 'The agent key as `Authorization: Bearer ag_live_…` (the MCP endpoint and the x402 routes).',
  },
};

const HEADER_COMPONENTS: Record<ResponseHeader, { id: string; spec: Json }> = {
  'Retry-After': {
    id: 'RetryAfter',
    spec: { description: 'Seconds to wait before retrying.', schema: { type: 'string', pattern: '^[0-9]+$' }, example: '1' },
  },
  Allow: {
    id: 'Allow',
    spec: { description: 'The methods this path takes.', schema: { type: 'string', enum: ['POST'] }, example: 'POST' },
  },
  'Idempotent-Replayed': {
    id: 'IdempotentReplayed',
    spec: {
      description: 'Present (`true`) when this is the stored answer of an earlier request with the same Idempotency-Key.',
      schema: { type: 'string', enum: ['true'] },
    },
  },
};

const TAGS = [
  { name: 'Agents', description: 'Registration and what an agent has earned.' },
  { name: 'Charges', description: "An agent charges a user's prepaid balance." },
  { name: 'Users', description: 'The payer: balances, history, spending policy, approvals, key rotation.' },
  { name: 'Withdrawals', description: 'An agent withdraws its earnings: USDC to Solana, USD to PayPal, minus 3%.' },
  { name: 'Admin', description: 'The operator: users, credits, enabling agents, reading any agent or charge.' },
  { name: 'Service', description: 'Health and this document.' },
  { name: 'MCP', description: 'The Model Context Protocol server for agents.' },
  { name: 'x402', description: 'The x402 v2 facilitator for agents (scheme exact on Solana, docs/x402.md).' },
  { name: 'Webhooks', description: 'Signed (Standard Webhooks) events for agents and users, delivered at least once: docs/webhooks.md.' },
  {
    name: 'Receipts',
    description: 'Signed receipts (compact JWS, ES256) of settled money movements, and the public keys that verify them: docs/receipts.md.',
  },
];

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

function componentId(schema: z.ZodType, where: string): string {
  const id = COMPONENTS.get(schema)?.id;
  if (!id) throw new Error(`${where}: response schemas must be registered with component() (functions/contracts/response.schemas.ts)`);
  return id;
}

/** `create-charge` → `createCharge`. */
const operationId = (name: string) => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** A zod schema's input side as JSON Schema, without the `$schema` a standalone one carries. */
function inputJsonSchema(schema: z.ZodType): Json {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  return json;
}

function response(doc: ResponseDoc, where: string): Json {
  const headers = doc.headers?.length
    ? { headers: Object.fromEntries(doc.headers.map((h) => [h, { $ref: `#/components/headers/${HEADER_COMPONENTS[h].id}` }])) }
    : {};
  if (!doc.schema && !doc.contentType) return { description: doc.description, ...headers };
  const media: Json = doc.schema ? { schema: ref(componentId(doc.schema, where)) } : { schema: { type: 'string' } };
  if (doc.examples) media.examples = Object.fromEntries(Object.entries(doc.examples).map(([name, value]) => [name, { value }]));
  return { description: doc.description, ...headers, content: { [doc.contentType ?? 'application/json']: media } };
}

function parameters(route: RouteSpec, op: OperationDoc): Json[] {
  const params: Json[] = [];
  for (const [, name] of route.path.matchAll(/\{(\w+)\}/g)) {
    const description = name ? op.pathParams?.[name] : undefined;
    if (!name || !description) throw new Error(`${route.name}: describe path parameter {${name}} in pathParams`);
    params.push({ name, in: 'path', required: true, description, schema: { type: 'string' } });
  }
  for (const [name, field] of Object.entries(op.query?.shape ?? {})) {
    const { description, examples, ...schema } = inputJsonSchema(field as z.ZodType);
    params.push({
      name,
      in: 'query',
      // optional and defaulted fields both have an `optin`; a required one has none.
      required: (field as z.ZodType)._zod.optin === undefined,
      ...(description ? { description } : {}),
      schema,
      ...(Array.isArray(examples) && examples.length > 0 ? { example: examples[0] } : {}),
    });
  }
  if (op.idempotent === true) params.push({ $ref: '#/components/parameters/IdempotencyKey' });
  if (op.idempotent === 'optional') params.push({ $ref: '#/components/parameters/OptionalIdempotencyKey' });
  return params;
}

/**
 * A request without the key header of the operation's first credential set is told which header to
 * send (use-cases/auth.ts refuses with MISSING_KEY_HEADER's codes): those answers join the 401's
 * examples, after the route's own. An operation that reads a key header documents a 401.
 */
function withMissingKeyHeaders(route: RouteSpec, op: OperationDoc): OperationDoc['responses'] {
  const codes = (op.security[0] ?? []).flatMap((credential) =>
    credential in MISSING_KEY_HEADER ? [MISSING_KEY_HEADER[credential as keyof typeof MISSING_KEY_HEADER]] : [],
  );
  if (codes.length === 0) return op.responses;
  const unauthorized = op.responses[401];
  if (!unauthorized) throw new Error(`${route.name}: reads a key header but documents no 401`);
  const missing = errors(
    unauthorized.description,
    codes.map((code) => refusalText(code)),
  );
  return { ...op.responses, 401: { ...unauthorized, examples: { ...unauthorized.examples, ...missing.examples } } };
}

function operation(route: RouteSpec, op: OperationDoc): Json {
  // A body schema may already be a component (the MCP endpoint's JSON-RPC message): keep its name.
  let bodyId: string | undefined;
  if (op.body) {
    bodyId = COMPONENTS.get(op.body.schema)?.id ?? op.body.name;
    component(bodyId, op.body.schema);
  }
  const responses = Object.fromEntries(
    Object.entries(withMissingKeyHeaders(route, op)).map(([status, doc]) => [status, response(doc, `${route.name} ${status}`)]),
  );
  const params = parameters(route, op);
  return {
    operationId: operationId(route.name),
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [op.tag],
    security: op.security.map((set) => Object.fromEntries(set.map((credential) => [credential, []]))),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: ref(bodyId ?? op.body.name), examples: { example: { value: op.body.example } } } },
          },
        }
      : {}),
    responses,
  };
}

/** Every schema in the registry as `#/components/schemas/<id>`, refs between them kept. */
function componentSchemas(): Json {
  const { schemas } = z.toJSONSchema(COMPONENTS, {
    io: 'input',
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Json> };
  const out: Json = {};
  for (const id of Object.keys(schemas).sort()) {
    const { $schema: _s, $id: _i, ...schema } = schemas[id] as Json;
    assertRepresentable(schema, id);
    out[id] = schema;
  }
  return out;
}

/** A zod type JSON Schema cannot express comes out as `{}`: it needs a `.meta()` saying what it is. */
function assertRepresentable(schema: unknown, where: string): void {
  if (schema === null || typeof schema !== 'object') return;
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' && value && typeof value === 'object') {
      for (const [name, property] of Object.entries(value)) {
        if (property && typeof property === 'object' && Object.keys(property).length === 0) {
          throw new Error(`${where}.${name} has no JSON Schema: give its zod schema a .meta({ type, description })`);
        }
      }
    }
    assertRepresentable(value, where);
  }
}

/** The document. Deterministic: the same routes and schemas always give the same text. */
export function buildOpenApiDocument(routes: readonly RouteSpec[] = ROUTES) {
  const paths: Record<string, Json> = {};
  const operations: OperationDoc[] = [];
  for (const route of routes) {
    if (route.path === '$default' || route.pages) continue;
    // The entry's thunk: its examples are made (validators run) only here.
    const op = route.operation?.();
    if (!op) throw new Error(`route ${route.name} has no operation (its registry entry's \`operation\`, functions/registry/)`);
    if (route.method === 'ANY') throw new Error(`route ${route.name}: an ANY route cannot be described; list its methods`);
    operations.push(op);
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation(route, op) };
  }
  const unmatched = response(UNMATCHED_ROUTE, '$default');
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'Agent Payment Service',
      version: API_VERSION,
      description:
        'Prepaid USD and USDC balances that agents charge, and withdrawals of what agents earn. Every error is ' +
        '`{"error": message}`; a method and path no operation lists answers 404 `not found` ' +
        '(`x-default-route`). Amounts are exact decimal JSON numbers.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/', description: 'The deployment serving this document (locally `npm start`: http://127.0.0.1:3000).' }],
    tags: TAGS,
    security: [],
    paths,
    components: {
      schemas: componentSchemas(),
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: true,
          description:
            'Required on money movements: 1-255 printable ASCII characters, scoped to (caller, endpoint). The same key with ' +
            'the same request answers the first answer again (Idempotent-Replayed: true); with another request 422.',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
          example: '5b0c7d1e-0000-4000-8000-000000000001',
        },
        OptionalIdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Optional on creations whose answer holds a secret shown once (an agent key, a user key, a grant key, a webhook ' +
            'signing secret): send a random key (a UUID) so that a lost answer can be asked for again. The same key with the ' +
            'same request answers the first answer again, secret included (Idempotent-Replayed: true), for 24 h; with another ' +
            'request 422. Scoped to (caller, endpoint); registration has no caller, so there the key and the body are the proof. ' +
            'Without it the request runs as it always has. The stored answer is kept encrypted (docs/idempotency.md).',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
          example: '5b0c7d1e-0000-4000-8000-000000000001',
        },
      },
      headers: Object.fromEntries(Object.values(HEADER_COMPONENTS).map(({ id, spec }) => [id, spec])),
      // Only the schemes some operation uses (an unused one fails the lint).
      securitySchemes: Object.fromEntries(
        Object.entries(SECURITY_SCHEMES).filter(([name]) =>
          operations.some((op) => op.security.some((set) => set.includes(name as Credential))),
        ),
      ),
    },
    // API Gateway's `$default` route: what every method and path not listed in `paths` answers.
    'x-default-route': unmatched,
  };
}

export type OpenApiDocument = ReturnType<typeof buildOpenApiDocument>;

/** The document as committed: two-space JSON and a final newline. */
export const renderOpenApiDocument = (doc: OpenApiDocument = buildOpenApiDocument()): string => `${JSON.stringify(doc, null, 2)}\n`;
