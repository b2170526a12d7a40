import { useTabOperation } from '../operations/tabs';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(useTabOperation);
