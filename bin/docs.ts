/**
 * npm run docs: writes the generated reference pages, docs/reference/endpoints.md from the OpenAPI
 * document (docs/openapi.json; `npm run openapi` first when the routes changed) and
 * docs/reference/configuration.md from functions/config.ts; functions/registry/needs.generated.ts,
 * each route's configuration needs from the registry (bin/registry/needs.ts); and, last (it counts
 * the lines of what the others wrote), docs/layout.md from each folder's README.md
 * (bin/docs/layout.ts), refused while a folder has none. `--check` exits 1 when a committed one is
 * stale (test/docs/reference.test.ts, test/docs/layout.test.ts and test/registry/needs.test.ts
 * check the same in the unit tier).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { layoutPage } from './docs/layout';
import { ROOT, referencePages } from './docs/pages';
import { NEEDS_MODULE, renderNeedsModule } from './registry/needs';

const check = process.argv.includes('--check');
const stale: string[] = [];
const emit = (page: { file: string; text: string }) => {
  if (check) {
    if (readFileSync(page.file, 'utf8') !== page.text) stale.push(path.relative(process.cwd(), page.file));
  } else {
    writeFileSync(page.file, page.text);
    console.log(`wrote ${path.relative(process.cwd(), page.file)}`);
  }
};

for (const page of [...referencePages(), { file: NEEDS_MODULE, text: renderNeedsModule() }]) emit(page);
const layout = layoutPage(ROOT);
if (layout.problems.length > 0) {
  console.error(
    `docs/layout.md not written: a folder's README.md is missing or wrong (bin/docs/layout.ts):\n  ${layout.problems.join('\n  ')}`,
  );
  process.exit(1);
}
emit(layout);
if (stale.length > 0) {
  console.error(`stale: ${stale.join(', ')}: run \`npm run docs\``);
  process.exit(1);
}
