/**
 * The endpoint reference (docs/reference/endpoints.md), rendered from the OpenAPI document
 * (docs/openapi.json, itself generated from the route table and the zod schemas): one section per
 * operation with its method, path, auth, summary, parameters, request fields and every answer, the
 * error answers with their exact messages. Nothing here is written by hand about an endpoint, so
 * the page says what the document says.
 */
import { code, generatedNotice, kebab, table } from './markdown';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Schema {
  $ref?: string;
  type?: string | string[];
  description?: string;
  enum?: Json[];
  const?: Json;
  format?: string;
  pattern?: string;
  default?: Json;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  items?: Schema;
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  propertyNames?: Schema;
}

interface Parameter {
  $ref?: string;
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}

interface Media {
  schema?: Schema;
  examples?: Record<string, { value: Json }>;
}

interface Response {
  description: string;
  headers?: Record<string, { $ref?: string; description?: string }>;
  content?: Record<string, Media>;
}

interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, Media> };
  responses: Record<string, Response>;
}

interface SecurityScheme {
  type: string;
  in?: string;
  name?: string;
  scheme?: string;
  description?: string;
}

export interface OpenApiDocument {
  info: { title: string; description?: string };
  tags?: { name: string; description?: string }[];
  security?: Record<string, string[]>[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    parameters?: Record<string, Parameter>;
    headers?: Record<string, { description?: string }>;
    securitySchemes: Record<string, SecurityScheme>;
  };
  'x-default-route'?: Response;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** `#/components/schemas/Charge` → `Charge`. */
const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);
const schemaAnchor = (name: string) => `schema-${kebab(name)}`;
const schemaLink = (name: string) => `[${name}](#${schemaAnchor(name)})`;

/** An OpenAPI JSON value written as inline code, one line. */
const literal = (value: Json) => code(JSON.stringify(value));

function resolveParameter(doc: OpenApiDocument, parameter: Parameter): Parameter {
  if (!parameter.$ref) return parameter;
  const found = doc.components.parameters?.[refName(parameter.$ref)];
  if (!found) throw new Error(`unresolved parameter ${parameter.$ref}`);
  return found;
}

function resolveSchema(doc: OpenApiDocument, schema: Schema): Schema {
  if (!schema.$ref) return schema;
  const found = doc.components.schemas[refName(schema.$ref)];
  if (!found) throw new Error(`unresolved schema ${schema.$ref}`);
  return found;
}

/** A schema's type in a few words: a link for a named schema, `Charge[]`, `string or null`. */
function typeOf(schema: Schema): string {
  if (schema.$ref) return schemaLink(refName(schema.$ref));
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(' or ');
  if (schema.const !== undefined) return literal(schema.const);
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const named = types.map((t) => {
    if (t === 'array') return schema.items ? `${typeOf(schema.items)}[]` : 'array';
    if (t === 'string' && schema.format) return `string (${schema.format})`;
    return t;
  });
  return named.length > 0 ? named.join(' or ') : 'any';
}

/** The limits a schema puts on a value, in words: `one of "USD", "USDC"`, `60 to 604800`. */
function constraintsOf(schema: Schema): string[] {
  const out: string[] = [];
  if (schema.enum) out.push(`one of ${schema.enum.map(literal).join(', ')}`);
  if (schema.minimum !== undefined && schema.maximum !== undefined) out.push(`${schema.minimum} to ${schema.maximum}`);
  else if (schema.minimum !== undefined) out.push(`at least ${schema.minimum}`);
  else if (schema.maximum !== undefined) out.push(`at most ${schema.maximum}`);
  if (schema.minLength !== undefined && schema.maxLength !== undefined) out.push(`${schema.minLength} to ${schema.maxLength} characters`);
  else if (schema.minLength !== undefined) out.push(`at least ${schema.minLength} characters`);
  else if (schema.maxLength !== undefined) out.push(`at most ${schema.maxLength} characters`);
  if (schema.minItems !== undefined || schema.maxItems !== undefined) {
    out.push(`${schema.minItems ?? 0} to ${schema.maxItems ?? 'any number of'} items`);
  }
  // A format says more than its pattern (a date-time's pattern is 400 characters of regex).
  if (schema.pattern && !schema.format && schema.pattern.length <= 60) out.push(`matches ${code(schema.pattern)}`);
  if (schema.default !== undefined) out.push(`default ${literal(schema.default)}`);
  return out;
}

/** A description followed by its constraints: `USD or USDC. One of "USD", "USDC".` */
function sentence(description: string, constraints: readonly string[]): string {
  if (constraints.length === 0) return description;
  const limits = constraints.join('; ');
  const capitalized = `${limits.charAt(0).toUpperCase()}${limits.slice(1)}.`;
  if (description.length === 0) return capitalized;
  return `${description}${/[.!?]$/.test(description) ? '' : '.'} ${capitalized}`;
}

interface FieldRow {
  path: string;
  schema: Schema;
  required: boolean;
}

/**
 * The fields of an object schema, nested objects flattened into dotted paths (`perCharge.USD`) and
 * maps written with their key (`agents.<key>.blocked`), so a request's every field has a row.
 */
function fieldsOf(doc: OpenApiDocument, schema: Schema, prefix = '', depth = 0): FieldRow[] {
  const rows: FieldRow[] = [];
  const required = new Set(schema.required ?? []);
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}${name}`;
    rows.push({ path, schema: field, required: required.has(name) });
    if (!field.$ref && depth < 3) rows.push(...nested(doc, field, path, depth));
  }
  return rows;
}

function nested(doc: OpenApiDocument, field: Schema, path: string, depth: number): FieldRow[] {
  const rows: FieldRow[] = [];
  if (field.properties) rows.push(...fieldsOf(doc, field, `${path}.`, depth + 1));
  if (typeof field.additionalProperties === 'object' && !field.additionalProperties.$ref) {
    const key = `${path}.<key>`;
    const value = field.additionalProperties;
    if (value.properties) rows.push(...fieldsOf(doc, value, `${key}.`, depth + 1));
  }
  return rows;
}

function fieldTable(doc: OpenApiDocument, schema: Schema, withRequired: boolean): string {
  const rows = fieldsOf(doc, schema).map((row) => {
    const describe = sentence(row.schema.description ?? '', constraintsOf(row.schema));
    let type = typeOf(row.schema);
    if (typeof row.schema.additionalProperties === 'object') {
      const keys = row.schema.propertyNames?.pattern ? ` (keys match ${code(row.schema.propertyNames.pattern)})` : '';
      type = `map of ${typeOf(row.schema.additionalProperties)}${keys}`;
    }
    const cells = [code(row.path), type];
    if (withRequired) cells.push(row.required ? 'yes' : 'no');
    cells.push(describe);
    return cells;
  });
  return table(withRequired ? ['field', 'type', 'required', 'meaning'] : ['field', 'type', 'meaning'], rows);
}

/** How a caller authenticates: the schemes of one requirement together, alternatives joined by "or". */
function authOf(doc: OpenApiDocument, operation: Operation): string {
  const requirements = operation.security ?? doc.security ?? [];
  if (requirements.length === 0) return 'none';
  const scheme = (name: string) => {
    const s = doc.components.securitySchemes[name];
    if (!s) throw new Error(`unknown security scheme ${name}`);
    if (s.type === 'http' && s.scheme === 'bearer') return code('Authorization: Bearer');
    if (name === 'adminSigV4') return 'AWS SigV4 (IAM)';
    return code(s.name ?? name);
  };
  return requirements.map((r) => Object.keys(r).map(scheme).join(' and ')).join(' or ');
}

/** The headers answers carry, by the name they are sent with (the components name them without dashes). */
function responseHeaders(doc: OpenApiDocument): [string, string][] {
  const found = new Map<string, string>();
  for (const { operation } of operations(doc)) {
    for (const response of Object.values(operation.responses)) {
      for (const [name, header] of Object.entries(response.headers ?? {})) {
        const resolved = header.$ref ? doc.components.headers?.[refName(header.$ref)] : header;
        if (!found.has(name)) found.set(name, resolved?.description ?? '');
      }
    }
  }
  return [...found.entries()];
}

function operations(doc: OpenApiDocument): { method: string; path: string; operation: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ method: m.toUpperCase(), path, operation: item[m] as Operation })),
  );
}

/** What an error answer says: its exact `{"error": …}` messages, or its examples as they are. */
function errorMessages(media: Media): string[] {
  return Object.values(media.examples ?? {}).map(({ value }) => {
    if (value && typeof value === 'object' && !Array.isArray(value) && typeof value.error === 'string' && Object.keys(value).length === 1) {
      return code(value.error);
    }
    return literal(value);
  });
}

function renderResponse(status: string, response: Response): string[] {
  const lines: string[] = [];
  const media = Object.entries(response.content ?? {});
  const body = media
    .map(([type, m]) => {
      const schema = m.schema ? typeOf(m.schema) : '';
      return type === 'application/json' ? schema : `${type}${schema && schema !== 'string' ? ` ${schema}` : ''}`;
    })
    .filter((s) => s.length > 0);
  const headers = Object.entries(response.headers ?? {}).map(([name]) => code(name));
  const head = [`\`${status}\` ${response.description}`];
  if (body.length > 0) head.push(`body: ${body.join(', ')}`);
  if (headers.length > 0) head.push(`headers: ${headers.join(', ')}`);
  lines.push(`- ${head.join(' — ')}`);
  const json = response.content?.['application/json'];
  if (json && !status.startsWith('2')) {
    const messages = errorMessages(json);
    for (const message of messages) lines.push(`  - ${message}`);
  }
  if (json && status.startsWith('2')) {
    const first = Object.entries(json.examples ?? {})[0];
    if (first) {
      const [name, { value }] = first;
      const label = Object.keys(json.examples ?? {}).length > 1 ? ` (${name})` : '';
      const pretty = JSON.stringify(value, null, 2).split('\n');
      lines.push(
        '',
        `  <details><summary>Example${label}</summary>`,
        '',
        '  ```json',
        ...pretty.map((l) => `  ${l}`),
        '  ```',
        '',
        '  </details>',
        '',
      );
    }
  }
  return lines;
}

function renderOperation(doc: OpenApiDocument, method: string, path: string, operation: Operation): string {
  const out: string[] = [];
  out.push(`### ${method} ${path}`, '');
  out.push(`<a id="${kebab(operation.operationId)}"></a>**${operation.summary}** · auth: ${authOf(doc, operation)}`, '');
  if (operation.description) out.push(operation.description, '');

  const parameters = (operation.parameters ?? []).map((p) => resolveParameter(doc, p));
  if (parameters.length > 0) {
    out.push('Parameters:', '');
    out.push(
      table(
        ['name', 'in', 'required', 'meaning'],
        parameters.map((p) => [
          code(p.name),
          p.in,
          p.required ? 'yes' : 'no',
          sentence(p.description ?? '', p.schema ? constraintsOf(p.schema) : []),
        ]),
      ),
      '',
    );
  }

  const body = operation.requestBody;
  if (body) {
    for (const [type, media] of Object.entries(body.content)) {
      const schema = media.schema;
      const name = schema?.$ref ? ` ${schemaLink(refName(schema.$ref))}` : '';
      out.push(`Request body (${code(type)}${body.required ? '' : ', optional'}):${name}`, '');
      const resolved = schema ? resolveSchema(doc, schema) : undefined;
      if (resolved?.properties && Object.keys(resolved.properties).length > 0) {
        out.push(fieldTable(doc, resolved, true), '');
        if (resolved.additionalProperties === false) out.push('Any other field is refused (400 `unknown field: …`).', '');
      } else if (schema && !schema.$ref) {
        out.push(`A ${typeOf(schema)}.`, '');
      }
    }
  }

  out.push('Answers:', '');
  for (const [status, response] of Object.entries(operation.responses)) out.push(...renderResponse(status, response));
  out.push('');
  return out.join('\n');
}

function renderSchema(doc: OpenApiDocument, name: string, schema: Schema): string {
  const out = [`### ${name}`, '', `<a id="${schemaAnchor(name)}"></a>${schema.description ? `${schema.description} ` : ''}`.trimEnd()];
  out.push('');
  if (schema.properties && Object.keys(schema.properties).length > 0) {
    out.push(fieldTable(doc, schema, true), '');
  } else {
    const limits = constraintsOf(schema);
    out.push(`${typeOf(schema)}${limits.length > 0 ? ` (${limits.join('; ')})` : ''}.`, '');
  }
  return out.join('\n');
}

export function renderEndpointReference(doc: OpenApiDocument): string {
  const all = operations(doc);
  const tags = (doc.tags ?? []).map((t) => t.name);
  const untagged = all.filter((o) => !(o.operation.tags ?? []).some((t) => tags.includes(t)));
  if (untagged.length > 0) throw new Error(`operations without a known tag: ${untagged.map((o) => o.operation.operationId).join(', ')}`);

  const out: string[] = [generatedNotice('docs/openapi.json'), '', '# Endpoint reference', ''];
  out.push(
    `Every operation of the ${doc.info.title}, as the OpenAPI document (\`docs/openapi.json\`, served at ` +
      '`GET /api/v1/openapi.json`) describes it, and that document is generated from the route table and the zod ' +
      'schemas the handlers validate with. The rules every endpoint shares (exact amounts, bodies, idempotency, ' +
      'pagination, keys, the states of a charge) are in [conventions.md](conventions.md); the document, its checks ' +
      'and a typed client in [openapi.md](openapi.md).',
    '',
  );
  if (doc.info.description) out.push(doc.info.description, '');

  out.push('## Authentication', '');
  out.push(
    table(
      ['scheme', 'sent as', 'meaning'],
      Object.entries(doc.components.securitySchemes).map(([name, s]) => [
        code(name),
        s.type === 'http' ? `\`Authorization: ${s.scheme === 'bearer' ? 'Bearer' : s.scheme}\` header` : `${code(s.name ?? name)} ${s.in}`,
        s.description ?? '',
      ]),
    ),
    '',
  );

  const headers = responseHeaders(doc);
  if (headers.length > 0) {
    out.push('## Response headers', '');
    out.push(
      table(
        ['header', 'meaning'],
        headers.map(([name, description]) => [code(name), description]),
      ),
      '',
    );
  }

  out.push('## Operations', '');
  out.push(
    table(
      ['operation', 'summary', 'auth'],
      all.map(({ method, path, operation }) => [
        `[${code(`${method} ${path}`)}](#${kebab(operation.operationId)})`,
        operation.summary,
        authOf(doc, operation),
      ]),
    ),
    '',
  );

  for (const tag of doc.tags ?? []) {
    const ofTag = all.filter((o) => o.operation.tags?.[0] === tag.name);
    if (ofTag.length === 0) continue;
    out.push(`## ${tag.name}`, '');
    if (tag.description) out.push(tag.description, '');
    for (const { method, path, operation } of ofTag) out.push(renderOperation(doc, method, path, operation));
  }

  const fallback = doc['x-default-route'];
  if (fallback) {
    out.push('## Any other method and path', '');
    out.push('Answers:', '', ...renderResponse('404', fallback), '');
  }

  out.push('## Schemas', '');
  out.push('The JSON bodies the operations above take and answer with.', '');
  for (const [name, schema] of Object.entries(doc.components.schemas)) out.push(renderSchema(doc, name, schema));

  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

/** For the tests: every operation id the document lists, as the page anchors them. */
export function operationAnchors(doc: OpenApiDocument): string[] {
  return operations(doc).map(({ operation }) => kebab(operation.operationId));
}
