/**
 * What an MCP tool is (functions/mcp/tools.ts writes one entry per tool of the registry): its
 * arguments, annotations, the HTTP call it stands for and the route's operation. Apart from the
 * tools themselves so the tools can live in more than one file (tab-tools.ts) without a cycle.
 */
import type * as z from 'zod';
import type { Operation } from '../operations/operation';
import type { McpToolName } from '../registry/mcp-tools';
import type { RouteName } from '../registry/routes';

/**
 * An API request as the stdio server sends it over HTTP: the method and path are the tool's route's,
 * its `{param}`s filled from `params` (the agent key is added by the caller).
 */
export interface ApiCall {
  params?: Record<string, string>;
  query?: Record<string, string | undefined>;
  /** JSON body; amounts as LosslessNumber so they are written as their exact literal. */
  body?: Record<string, unknown>;
  headers?: Record<string, string | undefined>;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolSpec<I extends z.ZodObject = z.ZodObject> extends ToolImplementation<I> {
  /** The registry's name for it (functions/registry/mcp-tools.ts MCP_TOOLS). */
  name: McpToolName;
  /** The route whose operation it is: its method and path, its use case, its grants. */
  route: RouteName;
}

/** What functions/mcp/tools.ts writes for a tool; its name and route are the registry's. */
export interface ToolImplementation<I extends z.ZodObject = z.ZodObject> {
  title: string;
  description: string;
  annotations: ToolAnnotations;
  /** The arguments, validated before anything runs (messages as the API words them). */
  input: I;
  /** The answer's shape on success (MCP structuredContent), when it is one object shape. */
  output?: z.ZodObject;
  /** The HTTP API request this tool stands for: the stdio server sends it, the remote server executes it in-process. */
  http(args: z.infer<I>): ApiCall;
  /**
   * The route's operation (functions/operations/): the remote server runs the very request `http`
   * makes through it, in-process, so a tool answers exactly what its route answers.
   */
  operation: AnyOperation;
}

// biome-ignore lint/suspicious/noExplicitAny: an operation of any credentials, key rule, input and outcome.
type AnyOperation = Operation<any, any, any, any, any>;

export const tool = <I extends z.ZodObject>(spec: ToolImplementation<I>) => spec as unknown as ToolImplementation;
