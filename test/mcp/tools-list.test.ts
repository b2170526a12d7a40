/**
 * MCP `tools/list` is a contract with agents: it changes only by additions. The answer as it was
 * (test/mcp/tools-list.json) must still be its first entries, byte for byte once serialised; a new
 * tool goes after them (then add it to the file).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { TOOL_LIST } from '../../functions/mcp/server';
import { MCP_TOOL_NAMES } from '../../functions/registry/routes';

const KNOWN: unknown[] = JSON.parse(readFileSync(path.join(__dirname, 'tools-list.json'), 'utf8'));

describe('tools/list', () => {
  it('keeps every tool it had, in its place and byte for byte', () => {
    expect(JSON.stringify(TOOL_LIST.slice(0, KNOWN.length), null, 2)).toBe(JSON.stringify(KNOWN, null, 2));
  });

  it('lists the registry’s tools, in the registry’s order', () => {
    expect(TOOL_LIST.map((tool) => tool.name)).toEqual([...MCP_TOOL_NAMES]);
  });
});
