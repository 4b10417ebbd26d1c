/**
 * The key file of a running service, loaded for `paperbot run`: the file's own checks
 * (`loadKeyFile`), then the client's URL rules (TLS except on loopback, no user information,
 * no query), so a URL the client would refuse later is a key-file problem now, named with the
 * file's path and the field, and the run exits 2 before anything connects. What the file holds
 * that paperbot does not know (fields, scope names) is kept and reported through `onWarning`.
 */
import { checkBaseUrl, checkWebSocketUrl } from '../../client/index.ts';
import { isPaperbotError, PaperbotError } from '../../core/errors.ts';
import { type Credential, loadKeyFile } from '../../signing/index.ts';

export async function loadVenueKeyFile(
  path: string,
  /** Told what the file holds that paperbot accepted without knowing (fields, scope names). */
  onWarning: (message: string) => void = () => undefined,
): Promise<Credential> {
  const credential = await loadKeyFile(path);
  for (const warning of credential.warnings) onWarning(warning);
  const checks: Array<[field: string, check: () => unknown]> = [
    ['api_base_url', () => checkBaseUrl(credential.apiBaseUrl)],
    ['ws_url', () => checkWebSocketUrl(credential.wsUrl)],
  ];
  const problems: string[] = [];
  const fields: string[] = [];
  for (const [field, check] of checks) {
    try {
      check();
    } catch (error) {
      if (!isPaperbotError(error)) throw error;
      // The client's message never repeats user information; the URL itself is left out too.
      problems.push(`${field}: ${error.message}`);
      fields.push(field);
    }
  }
  if (problems.length > 0) {
    throw new PaperbotError(
      'KEY_FILE_INVALID',
      `key file ${path} is invalid: ${problems.join('; ')}`,
      {
        details: { path, fields },
      },
    );
  }
  return credential;
}
