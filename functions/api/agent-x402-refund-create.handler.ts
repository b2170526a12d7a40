import { refundX402PaymentOperation } from '../operations/x402-refunds';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(refundX402PaymentOperation);
