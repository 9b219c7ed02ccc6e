/**
 * Every TypeBox schema src/contract exports, as plain JSON Schema: it compiles under Ajv's
 * strict mode (the request validator runs lenient, where a misspelt keyword such as
 * `maxLenght` or an unknown format is silently no rule at all), and every `default` in it is
 * a value its own schema accepts (Ajv fills defaults in without checking them).
 */
import { readdirSync } from 'node:fs';
import { Kind } from '@sinclair/typebox';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import t from 'tap';
import * as baselineSchemas from '../../../src/contract/baseline.schema.ts';
import * as brainstormSchemas from '../../../src/contract/brainstorm.schema.ts';
import * as commonSchemas from '../../../src/contract/common.schema.ts';
import * as contextSchemas from '../../../src/contract/context.schema.ts';
import * as eventSchemas from '../../../src/contract/event.schema.ts';
import * as exportSchemas from '../../../src/contract/export.schema.ts';
import * as flowSchemas from '../../../src/contract/flow.schema.ts';
import * as forecastSchemas from '../../../src/contract/forecast.schema.ts';
import * as notificationSchemas from '../../../src/contract/notification.schema.ts';
import * as oauthSchemas from '../../../src/contract/oauth.schema.ts';
import * as planSchemas from '../../../src/contract/plan.schema.ts';
import * as publicSchemas from '../../../src/contract/public.schema.ts';
import * as scheduleSchemas from '../../../src/contract/schedule.schema.ts';
import * as searchSchemas from '../../../src/contract/search.schema.ts';
import * as taskSchemas from '../../../src/contract/task.schema.ts';
import * as teamSchemas from '../../../src/contract/team.schema.ts';
import * as templateSchemas from '../../../src/contract/template.schema.ts';
import * as webhookEventsSchemas from '../../../src/contract/webhook-events.schema.ts';
import * as webhookSchemas from '../../../src/contract/webhook.schema.ts';
import * as workSchemas from '../../../src/contract/work.schema.ts';

/** Each schema module by file name (static imports, so test/tiers.unit.test.ts sees what they load). */
const MODULES: Record<string, Record<string, unknown>> = {
  'baseline.schema.ts': baselineSchemas,
  'brainstorm.schema.ts': brainstormSchemas,
  'common.schema.ts': commonSchemas,
  'context.schema.ts': contextSchemas,
  'event.schema.ts': eventSchemas,
  'export.schema.ts': exportSchemas,
  'flow.schema.ts': flowSchemas,
  'forecast.schema.ts': forecastSchemas,
  'notification.schema.ts': notificationSchemas,
  'oauth.schema.ts': oauthSchemas,
  'plan.schema.ts': planSchemas,
  'public.schema.ts': publicSchemas,
  'schedule.schema.ts': scheduleSchemas,
  'search.schema.ts': searchSchemas,
  'task.schema.ts': taskSchemas,
  'team.schema.ts': teamSchemas,
  'template.schema.ts': templateSchemas,
  'webhook-events.schema.ts': webhookEventsSchemas,
  'webhook.schema.ts': webhookSchemas,
  'work.schema.ts': workSchemas,
};

// As the server compiles them: a command list's `oneOf` is told apart by its discriminator.
const ajv = new Ajv2020({ strict: true, allErrors: true, discriminator: true });
addFormats.default(ajv);
// Ours: a parameter the client must send, checked by the handler (oauth.schema.ts, openapi.ts).
ajv.addKeyword({ keyword: 'x-required', schemaType: 'boolean' });

/** Each subschema of `schema` that has a default, with its JSON pointer. */
function withDefaults(schema: unknown, at = ''): [string, Record<string, unknown>][] {
  if (!schema || typeof schema !== 'object') return [];
  const found: [string, Record<string, unknown>][] = [];
  if (!Array.isArray(schema) && 'default' in schema)
    found.push([at, schema as Record<string, unknown>]);
  for (const [key, value] of Object.entries(schema))
    if (key !== 'default') found.push(...withDefaults(value, `${at}/${key}`));
  return found;
}

t.test('every schema module is read here', async (t) => {
  const files = readdirSync('src/contract').filter((name) => name.endsWith('.schema.ts'));
  t.same(Object.keys(MODULES).sort(), files.sort());
});

let schemas = 0;
for (const [name, exported] of Object.entries(MODULES)) {
  t.test(name, async (t) => {
    for (const [symbol, value] of Object.entries(exported)) {
      if (!value || typeof value !== 'object' || !(Kind in value)) continue;
      schemas++;
      // As JSON: TypeBox's marks are symbol keys, which neither Ajv nor the OpenAPI document reads.
      const schema = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
      t.doesNotThrow(() => ajv.compile(schema), `${symbol} compiles in strict mode`);
      for (const [pointer, sub] of withDefaults(schema)) {
        const valid = ajv.validate(sub, sub.default);
        t.ok(valid, `${symbol}${pointer}: its default ${JSON.stringify(sub.default)} is valid`, {
          errors: ajv.errors,
        });
      }
    }
  });
}

t.test('the schemas were found', async (t) => {
  t.ok(schemas >= 100, `${schemas} schemas`);
});
