/**
 * npm run openapi: writes docs/openapi.json from the route table and the zod schemas
 * (functions/api/openapi/document.ts). `--check` exits 1 when the committed file is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { renderOpenApiDocument } from '../functions/api/openapi/document';

const file = path.resolve(__dirname, '..', 'docs', 'openapi.json');
const text = renderOpenApiDocument();
if (process.argv.includes('--check')) {
  const committed = readFileSync(file, 'utf8');
  if (committed !== text) {
    console.error('docs/openapi.json is stale: run `npm run openapi`');
    process.exit(1);
  }
} else {
  writeFileSync(file, text);
  console.log(`wrote ${path.relative(process.cwd(), file)}`);
}
