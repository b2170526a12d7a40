/**
 * Tabs as operations (DESIGN §29, docs/tabs.md): the agent opens, uses, reads and closes a tab; the
 * payer lists and closes theirs. Each is the route's one definition; functions/api/<route>.handler.ts
 * and the MCP tools (`tab_open`, `tab_use`, `tab_close`) are derived from these objects.
 */
import { answerOf } from '../contracts/api';
import { renderCharge } from '../contracts/charge-outcome';
import { closeTabSchema, listTabUsageQuerySchema, listUserTabsQuerySchema, openTabSchema, tabUsageSchema } from '../contracts/tab.schemas';
import { tabView, usageAnswerView, usageView, userTabView } from '../contracts/tab-views';
import type { Tab } from '../core/tabs';
import { AUTH_MESSAGES } from '../messages/credentials';
import * as NEEDS from '../registry/needs.generated';
import { closeTab } from '../use-cases/tabs/close';
import { listPayerTabs, listTabUsage, openTab, readTab, useTab } from '../use-cases/tabs/tabs';
import { operation } from './operation';

const tabAnswer = (tab: Tab) => ({ statusCode: 200, body: tabView(tab) });

/** POST /api/v1/agents/tabs: x-agent-key, x-user-key (an account key or a grant key), Idempotency-Key. */
export const openTabOperation = operation({
  route: 'agent-open-tab',
  needs: NEEDS.agentOpenTab,
  credentials: { kind: 'agentForPayer', refusal: AUTH_MESSAGES.createCharge },
  idempotency: 'required',
  body: { schema: openTabSchema },
  // A tab above the payer's approval threshold hands out an approval link, as a hold does.
  links: true,
  run: ({ caller: { agent, userId, userKeyHash, grant }, idempotencyKey, body, baseUrl }) =>
    openTab({ agent, userId, userKeyHash, grant, idempotencyKey, baseUrl, ...body }),
  render: (outcome, { baseUrl }) => answerOf(renderCharge(outcome, baseUrl)),
});

/** POST /api/v1/agents/tabs/{id}/usage: x-agent-key, Idempotency-Key, `{amount, description?}`. */
export const useTabOperation = operation({
  route: 'agent-use-tab',
  needs: NEEDS.agentUseTab,
  credentials: { kind: 'agent', refusal: AUTH_MESSAGES.lifecycle },
  idempotency: 'required',
  body: { schema: tabUsageSchema },
  run: ({ caller: { agent }, idempotencyKey, params, body }) => useTab({ agent, tabId: params.id, idempotencyKey, ...body }),
  render: (usage) => ({ statusCode: 200, body: usageAnswerView(usage) }),
});

/** GET /api/v1/agents/tabs/{id}: x-agent-key. */
export const getTabOperation = operation({
  route: 'agent-get-tab',
  needs: NEEDS.agentGetTab,
  credentials: { kind: 'agent', refusal: AUTH_MESSAGES.lifecycle },
  idempotency: 'none',
  run: ({ caller: { agent }, params }) => readTab(agent.id, params.id),
  render: tabAnswer,
});

/** GET /api/v1/agents/tabs/{id}/usage?limit=&cursor=: x-agent-key. */
export const listTabUsageOperation = operation({
  route: 'agent-list-tab-usage',
  needs: NEEDS.agentListTabUsage,
  credentials: { kind: 'agent', refusal: AUTH_MESSAGES.lifecycle },
  idempotency: 'none',
  query: listTabUsageQuerySchema,
  run: ({ caller: { agent }, params, query }) => listTabUsage(agent.id, params.id, query),
  render: (page) => ({ statusCode: 200, body: { data: page.usages.map(usageView), nextCursor: page.nextCursor } }),
});

/** POST /api/v1/agents/tabs/{id}/close: x-agent-key; a closed tab answers as it is. */
export const closeTabOperation = operation({
  route: 'agent-close-tab',
  needs: NEEDS.agentCloseTab,
  credentials: { kind: 'agent', refusal: AUTH_MESSAGES.lifecycle },
  idempotency: 'none',
  body: { schema: closeTabSchema, optional: true },
  run: ({ caller: { agent }, params }) => closeTab(params.id, { agentId: agent.id }),
  render: tabAnswer,
});

/** GET /api/v1/users/me/tabs?status=&limit=&cursor=: x-user-key. */
export const userListTabsOperation = operation({
  route: 'user-list-tabs',
  needs: NEEDS.userListTabs,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  query: listUserTabsQuerySchema,
  run: ({ caller: { userId }, query }) => listPayerTabs(userId, query),
  render: (page) => ({ statusCode: 200, body: { data: page.tabs.map(userTabView), nextCursor: page.nextCursor } }),
});

/** POST /api/v1/users/me/tabs/{id}/close: x-user-key. */
export const userCloseTabOperation = operation({
  route: 'user-close-tab',
  needs: NEEDS.userCloseTab,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  body: { schema: closeTabSchema, optional: true },
  run: ({ caller: { userId }, params }) => closeTab(params.id, { userId }),
  render: tabAnswer,
});
