/**
 * npm run docs: writes the generated reference pages, docs/reference/endpoints.md from the OpenAPI
 * document (docs/openapi.json; `npm run openapi` first when the routes changed) and
 * docs/reference/configuration.md from functions/config.ts; functions/registry/needs.generated.ts,
 * each route's configuration needs from the registry (bin/registry/needs.ts);
 * bin/local/environments.generated.json, each function's variables and grants as the synthesized
 * stack gives them (bin/docs/environments.ts); and, last, docs/layout.md from each folder's
 * README.md (bin/docs/layout.ts), refused while a folder has none. `--check` exits 1 when a
 * committed one is stale (test/docs/reference.test.ts, test/docs/layout.test.ts,
 * test/registry/needs.test.ts and test/cdk/environments.test.ts check the same in the unit tier).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ENVIRONMENTS_FILE, renderEnvironments } from './docs/environments';
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

const generated = [
  ...referencePages(),
  { file: NEEDS_MODULE, text: renderNeedsModule() },
  { file: ENVIRONMENTS_FILE, text: renderEnvironments() },
];
for (const page of generated) emit(page);
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
