/**
 * The operations live in the registry's entries (functions/registry/*.ts), and two things keep them
 * out of what runs on Lambda (docs/registry.md "Why the operation sits in the entry"): an entry's
 * operation is a thunk that only the OpenAPI generator calls, and no function's code imports the
 * route table (handlers read needs.generated.ts, the MCP function mcp-tools.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { COMPONENTS } from '../../functions/contracts/response.schemas';
import { purchaseListSchema } from '../../functions/contracts/x402';
import { ROUTES, routeNamed } from '../../functions/registry/routes';

const FUNCTIONS = path.resolve(__dirname, '..', '..', 'functions');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Code outside the registry that may read the route table: the OpenAPI generator, the API adapter's re-export (lib and tests), and the stdio MCP server (bin/mcp, not a Lambda function). */
const MAY_READ_THE_TABLE = [path.join('api', 'openapi') + path.sep, path.join('api', 'routes.ts'), path.join('mcp', 'over-http.ts')];
/** What any function may import from the registry at run time. */
const FOR_FUNCTIONS = new Set(['needs.generated', 'mcp-tools']);

describe("the registry's operations", () => {
  it('are not built by importing the registry: the list of purchases registers its component only when its operation is asked for', () => {
    expect(ROUTES.length).toBeGreaterThan(60);
    expect(COMPONENTS.get(purchaseListSchema)).toBeUndefined();
    const op = routeNamed('agent-x402-purchases-list').operation?.();
    expect(op?.summary).toBe("x402: the agent's purchases");
    expect(COMPONENTS.get(purchaseListSchema)?.id).toBe('X402PurchaseList');
  });

  it('stay out of the functions: no code under functions/ imports the route table or an area at run time, but the generator', () => {
    const wrong = sourceFiles(FUNCTIONS).flatMap((file) => {
      const relative = path.relative(FUNCTIONS, file);
      if (relative.startsWith(`registry${path.sep}`) || MAY_READ_THE_TABLE.some((allowed) => relative.startsWith(allowed))) return [];
      const text = readFileSync(file, 'utf8');
      // Type-only imports are erased from the bundle; `export … from` re-exports count.
      return [...text.matchAll(/^(?:import|export)\s+(?!type\s)[^;]*?from\s+'((?:\.\.?\/)+registry\/([\w.-]+))'/gms)]
        .filter((match) => !FOR_FUNCTIONS.has(match[2] ?? ''))
        .map((match) => `${relative} imports ${match[1]}`);
    });
    expect(wrong).toEqual([]);
  });
});
