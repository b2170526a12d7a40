import { purchaseReceiptOperation } from '../operations/x402-purchases';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(purchaseReceiptOperation);
