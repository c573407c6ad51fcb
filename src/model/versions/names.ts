// Names of model entities (assets, attributes, templates, views). Asset and attribute names
// are path segments (/Site/Area/Pump-101|Flow), so they may not contain "/" or "|"; no entity name may carry control characters or
// surrounding blanks, which would make two names look the same.
import { ServiceError } from '../../errors.js';

export const NAME_MAX = 200;

export function checkName(field: string, name: string, opts: { pathSegment?: boolean } = {}): string {
  const problem =
    name.length === 0 ? 'must not be empty'
      : name.length > NAME_MAX ? `longer than ${NAME_MAX} characters`
        : name.trim() !== name ? 'has leading or trailing blanks'
          : /[\u0000-\u001f\u007f]/.test(name) ? 'contains a control character'
            : opts.pathSegment && name.includes('/') ? 'contains "/" (names are path segments)'
              : opts.pathSegment && name.includes('|') ? 'contains "|" (it separates an asset path from an attribute name)'
              : null;
  if (problem) throw new ServiceError('invalid-request', `${field}: ${problem}`, { errors: [{ field, problem }] });
  return name;
}
