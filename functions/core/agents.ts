/** Agents: the sellers that charge users and withdraw what they earned. */
export interface Agent {
  id: string;
  name: string;
  email: string;
  website: string;
  enabled: boolean;
  createdAt: string;
}
