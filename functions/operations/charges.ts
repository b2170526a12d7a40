/**
 * The agent's charges as operations (docs/reference/endpoints.md): create, read, list, and the balance
 * they earn. Each is the route's one definition; functions/api/<route>.handler.ts and the MCP
 * tools are derived from these objects.
 */
import './operator-credentials';
import { answerOf } from '../contracts/api';
import { renderCharge } from '../contracts/charge-outcome';
import { createChargeSchema, listChargesQuerySchema } from '../contracts/request.schemas';
import { balancesView, chargeView } from '../contracts/views';
import type { Charge } from '../core/charges';
import { AUTH_MESSAGES } from '../messages/credentials';
import * as NEEDS from '../registry/needs.generated';
import { agentBalance, type ChargePage, createCharge, listAgentCharges, readCharge } from '../use-cases/charges/charges';
import { listChargesForOperator } from '../use-cases/charges/operator-earnings';
import { operation, type RenderContext } from './operation';

/** A charge as its answer (200), its receipt links on `baseUrl` once settled (DESIGN §27). */
export const chargeAnswer = (charge: Charge, { baseUrl }: RenderContext) => ({ statusCode: 200, body: chargeView(charge, baseUrl) });

/** A page of charges as its answer (200), each with its receipt links. */
export const chargePageAnswer = (page: ChargePage, { baseUrl }: RenderContext) => ({
  statusCode: 200,
  body: { data: page.charges.map((c) => chargeView(c, baseUrl)), pagination: page.pagination, nextCursor: page.nextCursor },
});

/** POST /api/v1/agents/charges: x-agent-key, x-user-key (an account key or a grant key), Idempotency-Key. */
export const createChargeOperation = operation({
  route: 'create-charge',
  needs: NEEDS.createCharge,
  credentials: { kind: 'agentForPayer', refusal: AUTH_MESSAGES.createCharge },
  idempotency: 'required',
  body: { schema: createChargeSchema },
  // Charges above a payer's approval threshold hand out approval links, a charge made its receipt link (on PUBLIC_BASE_URL).
  links: true,
  run: ({ caller: { agent, userId, userKeyHash, grant }, idempotencyKey, body, baseUrl }) =>
    createCharge({ agent, userId, userKeyHash, grant, idempotencyKey, baseUrl, ...body }),
  render: (outcome, { baseUrl }) => answerOf(renderCharge(outcome, baseUrl)),
});

/**
 * GET /api/v1/agents/charge/{id}: the creating agent's x-agent-key, or the x-admin-key where the
 * stage recognises the operator by key (ADMIN_AUTH `key`); under IAM the operator reads any charge
 * through GET /api/v1/admin/charges/{id}, and x-admin-key here is no credential at all. Neither
 * sent: `missing x-agent-key header`, the header an agent (this route's caller) sends.
 */
export const getChargeOperation = operation({
  route: 'get-charge',
  needs: NEEDS.getCharge,
  credentials: { kind: 'agentOrOperatorKey', refusal: AUTH_MESSAGES.getCharge },
  idempotency: 'none',
  // A settled charge's receipt links (on PUBLIC_BASE_URL).
  links: true,
  run: ({ caller, params }) => readCharge('agent' in caller ? caller.agent.id : undefined, params.id),
  render: chargeAnswer,
});

/** GET /api/v1/admin/charges/{id}: the operator (IAM or x-admin-key), any agent's charge. */
export const adminGetChargeOperation = operation({
  route: 'admin-get-charge',
  needs: NEEDS.adminGetCharge,
  credentials: { kind: 'operator' },
  idempotency: 'none',
  // The receipt links the parties read (the operator reads none: it is no party; the charge's one shape, DESIGN §27).
  links: true,
  run: ({ params }) => readCharge(undefined, params.id),
  render: chargeAnswer,
});

/** GET /api/v1/agents/charges?page=&limit=&cursor=: x-agent-key. */
export const listChargesOperation = operation({
  route: 'list-charges',
  needs: NEEDS.listCharges,
  credentials: { kind: 'agent', refusal: AUTH_MESSAGES.listCharges },
  idempotency: 'none',
  query: listChargesQuerySchema,
  // Each settled charge's receipt links (on PUBLIC_BASE_URL).
  links: true,
  run: ({ caller: { agent }, query }) => listAgentCharges(agent.id, query),
  render: chargePageAnswer,
});

/** GET /api/v1/agents/balance: x-agent-key; what the agent has earned and may withdraw. */
export const getBalanceOperation = operation({
  route: 'get-balance',
  needs: NEEDS.getBalance,
  credentials: { kind: 'agent', refusal: AUTH_MESSAGES.balance },
  idempotency: 'none',
  run: ({ caller: { agent } }) => agentBalance(agent.id),
  render: (balances) => ({ statusCode: 200, body: { balances: balancesView(balances) } }),
});

/** GET /api/v1/admin/agents/{id}/charges?page=&limit=&cursor=: the operator (IAM or x-admin-key), any agent's charges. */
export const adminListAgentChargesOperation = operation({
  route: 'admin-list-agent-charges',
  needs: NEEDS.adminListAgentCharges,
  credentials: { kind: 'operator' },
  idempotency: 'none',
  query: listChargesQuerySchema,
  // The receipt links the parties read, as the agent's own list shows them.
  links: true,
  run: ({ params, query }) => listChargesForOperator(params.id, query),
  render: chargePageAnswer,
});
