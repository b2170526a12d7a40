import { getTabOperation } from '../operations/tabs';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(getTabOperation);
