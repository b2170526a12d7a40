/**
 * The operator's agent routes as operations (docs/operator-cli.md): agents listed, read and switched on or off.
 * Every one takes the operator (IAM, or x-admin-key where the stage takes a key). A module per use
 * case so that each function bundles only its own (operations/README.md); the admin CLI
 * (bin/operator/) runs the same use cases in-process and answers with these renders.
 */
import './operator-credentials';
import { listAgentsQuerySchema, updateAgentSchema } from '../contracts/request.schemas';
import { agentView, balancesView } from '../contracts/views';
import type { Agent } from '../core/agents';
import type { Balances } from '../core/users';
import * as NEEDS from '../registry/needs.generated';
import { type AgentPage, listAgentsForOperator, readAgent, updateAgentEnabled } from '../use-cases/identity/agents';
import { operation } from './operation';

const OPERATOR = { kind: 'operator' } as const;

/** An agent as the operator sees it (200). */
export const agentAnswer = (agent: Agent) => ({ statusCode: 200, body: agentView(agent) });

/** An agent and its withdrawable balance (200). */
export const agentWithBalanceAnswer = ({ agent, balances }: { agent: Agent; balances: Balances }) => ({
  statusCode: 200,
  body: { ...agentView(agent), balances: balancesView(balances) },
});

/** A page of agents (200). */
export const agentPageAnswer = (page: AgentPage) => ({
  statusCode: 200,
  body: { data: page.agents.map(agentView), nextCursor: page.nextCursor },
});

/** GET /api/v1/admin/agents?enabled=&limit=&cursor=: agents newest first, e.g. those waiting to be enabled. */
export const adminListAgentsOperation = operation({
  route: 'admin-list-agents',
  needs: NEEDS.adminListAgents,
  credentials: OPERATOR,
  idempotency: 'none',
  query: listAgentsQuerySchema,
  run: ({ query }) => listAgentsForOperator(query),
  render: agentPageAnswer,
});

/** GET /api/v1/admin/agents/{id}: an agent and its withdrawable balance. */
export const adminGetAgentOperation = operation({
  route: 'admin-get-agent',
  needs: NEEDS.adminGetAgent,
  credentials: OPERATOR,
  idempotency: 'none',
  run: ({ params }) => readAgent(params.id),
  render: agentWithBalanceAnswer,
});

/** PATCH /api/v1/admin/agents/{id} `{enabled}`. */
export const adminUpdateAgentOperation = operation({
  route: 'admin-update-agent',
  needs: NEEDS.adminUpdateAgent,
  credentials: OPERATOR,
  idempotency: 'none',
  body: { schema: updateAgentSchema },
  run: ({ params, body }) => updateAgentEnabled(params.id, body.enabled),
  render: agentAnswer,
});
