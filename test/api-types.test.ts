import { readFileSync } from 'node:fs';
import t from 'tap';
import { API_SCHEMA_FILE, generateApiTypes } from '../scripts/api-types.js';

// The console's API types come from the route definitions (issue 26): a route changed
// without `npm run api-types` fails here, so the console cannot drift from the server.
t.test('console/src/api-schema.ts is what the routes generate now', async (t) => {
  const generated = await generateApiTypes();
  t.ok(generated.includes('"/api/v1/screens": {'), 'the generated types cover the routes');
  t.ok(readFileSync(API_SCHEMA_FILE, 'utf8') === generated, 'the checked-in file matches (else run: npm run api-types)');
});
