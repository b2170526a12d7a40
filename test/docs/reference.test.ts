/**
 * The generated reference pages (bin/docs.ts): docs/reference/endpoints.md from docs/openapi.json,
 * docs/reference/configuration.md from functions/config.ts. Stale, they fail here, in the unit tier
 * (CI runs it with every `npm test`): regenerate with `npm run docs`.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { configVariables } from '../../bin/docs/configuration';
import { type OpenApiDocument, operationAnchors, renderEndpointReference } from '../../bin/docs/endpoints';
import { configSource, referencePages } from '../../bin/docs/pages';
import { CONFIG_FIELDS } from '../../functions/config';

const ROOT = path.resolve(__dirname, '..', '..');
const read = (relative: string) => readFileSync(path.join(ROOT, relative), 'utf8');

describe('the generated reference pages', () => {
  it.each(
    referencePages().map((page) => [path.relative(ROOT, page.file), page.text]),
  )('%s is what `npm run docs` generates', (file, text) => {
    expect(read(file)).toBe(text);
  });
});

describe('the endpoint reference (docs/openapi.json)', () => {
  const doc = JSON.parse(read('docs/openapi.json')) as OpenApiDocument;
  const page = renderEndpointReference(doc);

  it('has a section for every operation, anchored by its operation id', () => {
    const anchors = operationAnchors(doc);
    expect(anchors.length).toBeGreaterThan(50);
    expect(new Set(anchors).size).toBe(anchors.length);
    for (const anchor of anchors) expect(page).toContain(`<a id="${anchor}"></a>`);
  });

  it('spells every error message of the document, exactly', () => {
    const messages = new Set<string>();
    for (const item of Object.values(doc.paths)) {
      for (const operation of Object.values(item) as {
        responses: Record<string, { content?: Record<string, { examples?: Record<string, { value: unknown }> }> }>;
      }[]) {
        for (const [status, response] of Object.entries(operation.responses)) {
          if (status.startsWith('2')) continue;
          for (const { value } of Object.values(response.content?.['application/json']?.examples ?? {})) {
            const error = (value as { error?: unknown }).error;
            if (typeof error === 'string') messages.add(error);
          }
        }
      }
    }
    expect(messages.size).toBeGreaterThan(50);
    for (const message of messages) expect(page).toContain(`\`${message}\``);
  });
});

describe('the configuration reference (functions/config.ts)', () => {
  const { variables } = configVariables(CONFIG_FIELDS, configSource());

  it('lists every variable of the schema, each with a meaning', () => {
    expect(variables.map((v) => v.name).sort()).toEqual(Object.keys(CONFIG_FIELDS.shape).sort());
    for (const v of variables) expect(v.meaning.length).toBeGreaterThan(10);
  });

  it('gives the defaults the schema applies', () => {
    const byName = new Map(variables.map((v) => [v.name, v]));
    expect(byName.get('BALANCE_SHARDS')?.default).toBe('16');
    expect(byName.get('ACCOUNT_CREATION_FEE')?.default).toBe('0.50');
    expect(byName.get('WEBHOOK_ALLOW_LOOPBACK')?.default).toBe('0');
    expect(byName.get('TABLE_NAME')?.required).toBe(true);
    expect(byName.get('ADMIN_KEY')?.required).toBe(false);
  });

  it('takes the meaning from a JSDoc comment or from .describe()', () => {
    const byName = new Map(variables.map((v) => [v.name, v]));
    expect(byName.get('TABLE_NAME')?.meaning).toBe('DynamoDB table holding every item of the service.');
    expect(byName.get('WEBHOOK_RETRY_SCHEDULE_SECONDS')?.meaning).toContain('5,300,1800,7200,18000,36000,36000');
  });
});
