// The built-in local administrator every request acts as when SERVICE_AUTH_MODE is
// `disabled` (and the stand-in for credential-less requests in `shadow` mode, where
// would-be denials are only logged).
import type { Principal } from './access-types.js';

export const LOCAL_ADMINISTRATOR_ID = '00000000-0000-4000-8000-000000000001';

const principal: Principal = Object.freeze({
  id: LOCAL_ADMINISTRATOR_ID,
  kind: 'local-administrator',
  subject: 'local-administrator',
  display: 'Local administrator (authentication disabled)',
  via: 'disabled-mode',
});

export function localAdministrator(): Principal {
  return principal;
}
