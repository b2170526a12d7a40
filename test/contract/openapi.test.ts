import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { buildOpenApiDocument, renderOpenApiDocument } from '../../functions/api/openapi/document';
import { ROUTES } from '../../functions/api/routes';
import { TOOLS } from '../../functions/mcp/tools';
import { MCP_TOOL_NAMES } from '../../functions/registry/routes';

const ROOT = path.resolve(__dirname, '..', '..');
const FILE = path.join(ROOT, 'docs', 'openapi.json');

describe('docs/openapi.json', () => {
  it('is what the route table and the zod schemas generate (regenerate with `npm run openapi`)', () => {
    expect(readFileSync(FILE, 'utf8')).toBe(renderOpenApiDocument());
  });

  it("describes every route of ROUTES, and no route that does not exist (the console's pages are not operations)", () => {
    const doc = buildOpenApiDocument();
    const described = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    const documented = ROUTES.filter((r) => r.path !== '$default' && !r.pages);
    expect(ROUTES.filter((r) => r.pages).map((r) => r.path)).toEqual([
      '/console/login',
      '/console/login/{proxy+}',
      '/console/signup/{proxy+}',
      '/console',
      '/console/{proxy+}',
    ]);
    const routes = documented.map((r) => `${r.method} ${r.path}`);
    expect(described.sort()).toEqual(routes.sort());
    // Each documented entry carries its operation; the console's pages and the catch-all carry none.
    expect(ROUTES.filter((r) => r.operation).map((r) => r.name)).toEqual(documented.map((r) => r.name));
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.openapi).toMatch(/^3\.1\./);
  });

  it('refuses to build when a route has no operation (a cast past the type that requires one)', () => {
    expect(() => buildOpenApiDocument([...ROUTES, { name: 'new-route', method: 'GET', path: '/new', table: {} }])).toThrow(
      'route new-route has no operation',
    );
  });

  it('says amounts are numbers read exactly, never rounded', () => {
    const doc = buildOpenApiDocument();
    const charge = doc.components.schemas.CreateChargeRequest as { properties: { amount: { type: string; description: string } } };
    expect(charge.properties.amount.type).toBe('number');
    expect(charge.properties.amount.description).toContain('never rounded');
  });

  it('passes redocly lint (recommended-strict)', () => {
    const bin = path.join(ROOT, 'node_modules', '.bin', 'redocly');
    const run = spawnSync(bin, ['lint', 'docs/openapi.json', '--format', 'stylish'], {
      cwd: ROOT,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', NO_COLOR: '1' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    // redocly.yaml extends recommended-strict: any warning is an error, so the exit status says it all.
    if (run.status !== 0) throw new Error(`redocly lint failed:\n${run.stdout}\n${run.stderr}`);
  }, 60_000);

  it('lists the MCP tools the MCP server offers, in its order (both read contracts/mcp.ts)', () => {
    expect(TOOLS.map((tool) => tool.name)).toEqual([...MCP_TOOL_NAMES]);
    const mcp = buildOpenApiDocument().paths['/mcp']?.post as { description?: string } | undefined;
    expect(mcp?.description).toContain(`tools ${MCP_TOOL_NAMES.join(', ')}.`);
  });
});
