import { listPurchasesOperation } from '../operations/x402-purchase-list';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(listPurchasesOperation);
