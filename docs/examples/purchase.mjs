// docs/examples/purchase.mjs: an agent buys from any x402 seller with its payer's USDC, under a grant.
// Stock @x402/fetch with a scheme client that asks this service for each payment; findDefaultAsset
// keeps the stock client's spend controls, which refuse a scheme client without it. Run it from the
// repository's root folder (README "Buy from x402 sellers"):
//   AGENT_KEY=<agent key> GRANT_KEY=<USDC grant key> BASE=http://127.0.0.1:3000 URL=http://127.0.0.1:4022/weather node docs/examples/purchase.mjs
import { randomUUID } from 'node:crypto';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { findDefaultAsset } from '@x402/svm';

const { BASE, AGENT_KEY, GRANT_KEY, URL } = process.env;
const service = {
  scheme: 'exact',
  findDefaultAsset,
  async createPaymentPayload(x402Version, paymentRequirements) {
    const res = await fetch(`${BASE}/api/v1/agents/x402/purchases`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-agent-key': AGENT_KEY, 'x-user-key': GRANT_KEY, 'idempotency-key': randomUUID() },
      body: JSON.stringify({ x402Version, paymentRequirements }),
    });
    const purchase = await res.json();
    if (res.status !== 201) throw new Error(purchase.error ?? `purchase ${purchase.id} is ${purchase.status}`);
    return purchase.paymentPayload;
  },
};
const res = await wrapFetchWithPayment(fetch, new x402Client().register('solana:*', service))(URL);
console.log(res.status, await res.json());
