/** Agents: the sellers that charge users and withdraw what they earned. */
export interface Agent {
  id: string;
  name: string;
  email: string;
  website: string;
  enabled: boolean;
  createdAt: string;
  /**
   * SHA-256 of the agent's key, which keys the agent item. Money movements condition on that
   * item (enabled, and still this key), so disabling or rotating takes effect at once.
   */
  keyHash: string;
  /** When `enabled` was last set through the service (absent when set by hand in the console). */
  enabledChangedAt?: string;
}

/** What a money movement needs to know of the agent moving it. */
export type AgentRef = Pick<Agent, 'id' | 'keyHash'>;

/** What registration answers beside the new key (docs/spec.md): the key is shown once, the agent waits for the operator. */
export const REGISTRATION_MESSAGE =
  'Agent registered. Store the apiKey now: it is shown only once. The agent is disabled until the ' +
  'service operator verifies it; contact the operator with your agentId to request activation.';
