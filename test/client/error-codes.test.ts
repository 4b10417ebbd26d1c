/** The client's own codes are listed once: the registry's entry for the client. */
import { expect, it } from 'vitest';
import { CLIENT_ERROR_CODES } from '../../src/client/index.ts';
import { LOCAL_ERROR_CODES } from '../../src/core/error-codes.ts';

it('takes the client codes from the registry, not from a list of its own', () => {
  expect(CLIENT_ERROR_CODES).toBe(LOCAL_ERROR_CODES.client);
  expect(CLIENT_ERROR_CODES).toContain('RESPONSE_ID_MISMATCH');
});
