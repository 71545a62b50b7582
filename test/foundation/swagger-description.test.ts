import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { API_KEY_ROLES } from '#src/access/tenants/api-key.entity.js';

describe("the spec's description (Swagger UI's first page)", () => {
  it('names the four roles and what each may do', () => {
    const spec = JSON.parse(readFileSync('openapi/gateway.json', 'utf8')) as {
      info: { description: string };
    };
    expect([...API_KEY_ROLES].sort()).toEqual(['admin', 'app', 'auditor', 'operator']);
    for (const role of API_KEY_ROLES) expect(spec.info.description).toMatch(`\`${role}\` (`);
    expect(spec.info.description).toContain('four roles');
    // Managing tenants is the operator's, not the admin's.
    expect(spec.info.description).not.toContain('`admin` (manages tenants');
  });
});
