import { ApiError } from '../../lib/errors.ts';
import type { Principal } from '../../lib/model.ts';
import { stdioCallerOperation } from '../contracts/system.ts';
import { admit, asKey, type AdmitDeps, type Caller } from './admit.ts';
import type { binder } from './bind.ts';

export interface CallerOperationDeps extends AdmitDeps {
  /** The principal of an API key; null when it is unknown or revoked. */
  verifyKey(key: string): Promise<Principal | null>;
}

/**
 * Who an MCP session over stdio (`stacks mcp` on the data dir) acts for, decided once at its start
 * with the same rules as a request: a wrong key is refused (and recorded as a refused
 * authentication), and no key only where anonymous search is allowed.
 */
export function callerOperations(bind: ReturnType<typeof binder>, d: CallerOperationDeps) {
  return {
    stdioCaller: bind(stdioCallerOperation, async (i): Promise<Caller> => {
      const principal = i.apiKey ? await d.verifyKey(i.apiKey) : null;
      if (i.apiKey && !principal) throw new ApiError('invalid_api_key', 'The API key is invalid or has been revoked.');
      const caller = asKey(principal);
      try {
        admit(d, { caller: 'search' }, caller);
      } catch (err) {
        if (err instanceof ApiError && err.code === 'invalid_api_key')
          throw new ApiError('invalid_api_key', 'This instance does not allow anonymous search: pass --api-key KEY or set STACKS_API_KEY.');
        throw err;
      }
      return caller;
    }),
  };
}
