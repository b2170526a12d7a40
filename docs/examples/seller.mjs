// docs/examples/seller.mjs: an agent of this service sells GET /weather for 0.01 USDC to any x402 client.
// Stock @x402/express middleware, with this service as its facilitator (the agent's key as Bearer).
// Run it from the repository's root folder (docs/x402.md "Get paid by x402 clients"), with an enabled
// agent's key; PORT chooses the port (4021):
//   AGENT_KEY=<agent key> BASE=http://127.0.0.1:3000 node docs/examples/seller.mjs
import { HTTPFacilitatorClient } from '@x402/core/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { ExactSvmScheme } from '@x402/svm/exact/server';
import express from 'express';

const { BASE, AGENT_KEY, PORT = '4021' } = process.env;
const x402 = await (await fetch(`${BASE}/api/v1/agents/x402`, { headers: { 'x-agent-key': AGENT_KEY } })).json();
const auth = { Authorization: `Bearer ${AGENT_KEY}` };
const facilitator = new HTTPFacilitatorClient({
  url: x402.facilitatorUrl,
  createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }),
});
const server = new x402ResourceServer(facilitator).register(x402.network, new ExactSvmScheme());
const app = express();
const route = {
  accepts: { scheme: 'exact', price: '$0.01', network: x402.network, payTo: x402.payTo, extra: x402.extra },
  description: 'a forecast',
};
app.use(paymentMiddleware({ 'GET /weather': route }, server));
app.get('/weather', (_req, res) => res.json({ forecast: 'sunny' }));
app.listen(Number(PORT), '127.0.0.1', () => console.log(`selling http://127.0.0.1:${PORT}/weather for 0.01 USDC`));
