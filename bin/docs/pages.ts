/** The generated reference pages: where each is written and what it holds (bin/docs.ts, test/docs/). */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CONFIG_FIELDS } from '../../functions/config';
import { renderConfigurationReference } from './configuration';
import { type OpenApiDocument, renderEndpointReference } from './endpoints';

export const ROOT = path.resolve(__dirname, '..', '..');

export interface GeneratedPage {
  file: string;
  text: string;
}

export function referencePages(): GeneratedPage[] {
  const openapi = JSON.parse(readFileSync(path.join(ROOT, 'docs', 'openapi.json'), 'utf8')) as OpenApiDocument;
  const configSource = readFileSync(path.join(ROOT, 'functions', 'config.ts'), 'utf8');
  return [
    { file: path.join(ROOT, 'docs', 'reference', 'endpoints.md'), text: renderEndpointReference(openapi) },
    { file: path.join(ROOT, 'docs', 'reference', 'configuration.md'), text: renderConfigurationReference(CONFIG_FIELDS, configSource) },
  ];
}
