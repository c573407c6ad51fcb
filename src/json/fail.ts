// Every refusal of the JSON codec goes through here, so each one is a ServiceError with
// code 'invalid-json', a message naming the byte offset, and details.offset.
import { ServiceError } from '../errors.js';

export function fail(offset: number, what: string): never {
  throw new ServiceError('invalid-json', `invalid JSON at byte ${offset}: ${what}`, { offset });
}
