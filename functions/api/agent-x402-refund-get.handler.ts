import { getX402RefundOperation } from '../operations/x402-refunds';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(getX402RefundOperation);
