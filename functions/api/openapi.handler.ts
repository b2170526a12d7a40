import { openapiOperation } from '../operations/openapi';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(openapiOperation);
