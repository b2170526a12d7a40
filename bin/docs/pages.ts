/** The generated reference pages: where each is written and what it holds (bin/docs.ts, test/docs/). */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CONFIG_FIELDS } from '../../functions/config';
import { renderConfigurationReference } from './configuration';
import { type OpenApiDocument, renderEndpointReference } from './endpoints';

export const ROOT = path.resolve(__dirname, '..', '..');

/**
 * What the configuration reference reads of the source (bin/docs/configuration.ts): the variables,
 * the schema's rules across them and the `NEEDS_*` lists, one text in that order.
 */
export const CONFIG_SOURCES = ['fields.ts', 'schema.ts', 'needs.ts'].map((file) => path.join('functions', 'config', file));
export const configSource = (): string => CONFIG_SOURCES.map((file) => readFileSync(path.join(ROOT, file), 'utf8')).join('\n');

export interface GeneratedPage {
  file: string;
  text: string;
}

export function referencePages(): GeneratedPage[] {
  const openapi = JSON.parse(readFileSync(path.join(ROOT, 'docs', 'openapi.json'), 'utf8')) as OpenApiDocument;
  return [
    { file: path.join(ROOT, 'docs', 'reference', 'endpoints.md'), text: renderEndpointReference(openapi) },
    { file: path.join(ROOT, 'docs', 'reference', 'configuration.md'), text: renderConfigurationReference(CONFIG_FIELDS, configSource()) },
  ];
}
