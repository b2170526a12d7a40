// docs/examples/buyer.mjs: any x402 client pays an agent's resource, here from the local chain's demo payer.
// Stock @x402/fetch with the stock @x402/svm client scheme. npm start writes the demo payer's keypair to
// .data/demo-payer.json (with IN_MEMORY=1, to the file DEMO_PAYER names, as npm start's export line
// sets it). Run it from the repository's root folder (docs/x402.md "Get paid by x402 clients"); URL
// is what to buy (seller.mjs's resource by default):
//   node docs/examples/buyer.mjs
import { existsSync, readFileSync } from 'node:fs';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import bs58 from 'bs58';

const { DEMO_PAYER: file = '.data/demo-payer.json', URL = 'http://127.0.0.1:4021/weather' } = process.env;
if (!existsSync(file)) {
  console.error(`no demo payer at ${file}: with IN_MEMORY=1, set DEMO_PAYER to the file on npm start's "demo payer" line`);
  process.exit(1);
}
const payer = JSON.parse(readFileSync(file, 'utf8'));
const signer = await createKeyPairSignerFromBytes(bs58.decode(payer.secretKey));
const client = new x402Client().register('solana:*', new ExactSvmScheme(signer, { rpcUrl: payer.rpcUrl }));
const res = await wrapFetchWithPayment(fetch, client)(URL);
if (!res.ok) {
  // Not paid: a refused payment is a 402 again, its reason in the PAYMENT-REQUIRED header.
  const required = res.headers.get('payment-required');
  console.error(res.status, required ? decodePaymentRequiredHeader(required).error : await res.text());
  process.exit(1);
}
console.log(res.status, await res.json(), decodePaymentResponseHeader(res.headers.get('payment-response')));
