/**
 * The stdio server's executor: each tool becomes the HTTP API request it stands for, sent to
 * BASE_URL with the agent key, so a local MCP client sees exactly what the API answers.
 */
import { stringify } from 'lossless-json';
import { ApiError } from '../core/errors';
import type { ToolExecutor } from './server';

export function overHttp(baseUrl: string, agentKey: string, fetchImpl: typeof fetch = fetch): ToolExecutor {
  const base = baseUrl.replace(/\/+$/, '');
  return async (tool, args) => {
    const call = tool.http(args as never);
    const url = new URL(base + call.path);
    for (const [name, value] of Object.entries(call.query ?? {})) if (value !== undefined) url.searchParams.set(name, value);
    const headers: Record<string, string> = { 'x-agent-key': agentKey };
    for (const [name, value] of Object.entries(call.headers ?? {})) if (value !== undefined) headers[name] = value;
    let body: string | undefined;
    if (call.body) {
      // LosslessNumber amounts are written as their literal text.
      body = stringify(call.body) ?? '{}';
      headers['content-type'] = 'application/json';
    }
    try {
      const res = await fetchImpl(url, { method: call.method, headers, ...(body === undefined ? {} : { body }) });
      return { status: res.status, text: await res.text() };
    } catch (error) {
      // The agent should learn the service is unreachable, not see a generic failure.
      throw new ApiError(502, `the API at ${base} is unreachable`, {}, { cause: error });
    }
  };
}
