/**
 * npm run docs: writes the generated reference pages, docs/reference/endpoints.md from the OpenAPI
 * document (docs/openapi.json; `npm run openapi` first when the routes changed) and
 * docs/reference/configuration.md from functions/config.ts; and functions/registry/needs.generated.ts,
 * each route's configuration needs from the registry (bin/registry/needs.ts). `--check` exits 1 when
 * a committed one is stale (test/docs/reference.test.ts and test/registry/needs.test.ts check the
 * same in the unit tier).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { referencePages } from './docs/pages';
import { NEEDS_MODULE, renderNeedsModule } from './registry/needs';

const stale: string[] = [];
for (const page of [...referencePages(), { file: NEEDS_MODULE, text: renderNeedsModule() }]) {
  if (process.argv.includes('--check')) {
    if (readFileSync(page.file, 'utf8') !== page.text) stale.push(path.relative(process.cwd(), page.file));
  } else {
    writeFileSync(page.file, page.text);
    console.log(`wrote ${path.relative(process.cwd(), page.file)}`);
  }
}
if (stale.length > 0) {
  console.error(`stale: ${stale.join(', ')}: run \`npm run docs\``);
  process.exit(1);
}
