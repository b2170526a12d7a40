/**
 * The drift check: every answer the e2e suites receive through `client()` (test/support/http.ts)
 * must be one docs/openapi.json describes — its status listed for the operation (method + path
 * template; anything unmatched is the `$default` route, `x-default-route`), its content type
 * listed, its JSON body valid against that status's schema (ajv, JSON Schema 2020-12), and the
 * document's response headers (Retry-After, Idempotent-Replayed) present only where declared
 * and then valid. Anything else throws, naming the request and what the document lacks.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import document from '../../docs/openapi.json';

type Json = Record<string, unknown>;
interface MediaDoc {
  schema?: Json;
}
interface ResponseDoc {
  description: string;
  headers?: Record<string, { $ref: string }>;
  content?: Record<string, MediaDoc>;
}
interface Operation {
  operationId: string;
  responses: Record<string, ResponseDoc>;
}

const doc = document as unknown as {
  paths: Record<string, Record<string, Operation>>;
  components: { headers: Record<string, { schema: Json }> };
  'x-default-route': ResponseDoc;
};

const DOC_ID = 'https://agent-payment-service/openapi.json';
// strict off: the document carries OpenAPI keys (paths, components) that are not JSON Schema.
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: DOC_ID, components: doc.components }, DOC_ID);

const validators = new Map<string, ValidateFunction>();
function validatorFor(schema: Json): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = validators.get(key);
  if (!validate) {
    // A component $ref is relative to the document; resolve it there.
    const resolved = typeof schema.$ref === 'string' ? { $ref: `${DOC_ID}${schema.$ref}` } : schema;
    validate = ajv.compile(resolved);
    validators.set(key, validate);
  }
  return validate;
}

const templates = Object.entries(doc.paths).map(([template, operations]) => ({
  template,
  operations,
  pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}/g, '[^/]+')}$`),
}));

/** The operation a request reaches, or undefined for the `$default` route. */
export function findOperation(method: string, pathname: string): { template: string; operation: Operation } | undefined {
  for (const { template, operations, pattern } of templates) {
    const operation = operations[method.toLowerCase()];
    if (operation && pattern.test(pathname)) return { template, operation };
  }
  return undefined;
}

/** Header names (lower case) the document declares somewhere, with their schemas. */
const KNOWN_HEADERS = new Map<string, { name: string; schema: Json }>();
for (const operations of Object.values(doc.paths)) {
  for (const operation of Object.values(operations)) {
    for (const response of Object.values(operation.responses)) {
      for (const [name, header] of Object.entries(response.headers ?? {})) {
        const id = header.$ref.split('/').pop() ?? '';
        const schema = doc.components.headers[id]?.schema;
        if (schema) KNOWN_HEADERS.set(name.toLowerCase(), { name, schema });
      }
    }
  }
}

export class ContractViolationError extends Error {
  override name = 'ContractViolationError';
}

/** Throws a ContractViolationError unless docs/openapi.json describes this answer. */
export function checkResponse(method: string, url: string, status: number, headers: Headers, text: string): void {
  const { pathname } = new URL(url);
  const found = findOperation(method, pathname);
  const where = `${method} ${pathname} → ${status}`;
  const operationName = found ? `${found.operation.operationId} (${method} ${found.template})` : 'the $default route (x-default-route)';
  const responses: Record<string, ResponseDoc> = found ? found.operation.responses : { '404': doc['x-default-route'] };
  const response = responses[String(status)];
  const fail = (problem: string): never => {
    throw new ContractViolationError(
      `${where}: ${problem}, which docs/openapi.json does not describe for ${operationName}.\nbody: ${text.slice(0, 500)}`,
    );
  };
  if (!response) fail(`status ${status} (documented: ${Object.keys(responses).join(', ')})`);
  const declared = new Set(Object.keys(response?.headers ?? {}).map((h) => h.toLowerCase()));
  for (const [lower, { name, schema }] of KNOWN_HEADERS) {
    const value = headers.get(lower);
    if (value === null) continue;
    if (!declared.has(lower)) fail(`the header ${name}: ${value}`);
    const validate = validatorFor(schema);
    if (!validate(value)) fail(`the header ${name}: ${value} (${ajv.errorsText(validate.errors)})`);
  }
  const content = response?.content;
  if (!content) {
    if (text.length > 0) fail('a body');
    return;
  }
  const mediaType = headers.get('content-type')?.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  const media = content[mediaType];
  if (!media) fail(`the content type "${mediaType}" (documented: ${Object.keys(content).join(', ')})`);
  if (mediaType !== 'application/json' || !media?.schema) return;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    fail('a body that is not JSON');
  }
  const validate = validatorFor(media.schema);
  if (!validate(body)) fail(`a body where ${ajv.errorsText(validate.errors, { dataVar: 'body' })}`);
}
