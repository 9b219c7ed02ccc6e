/** SearchResult (spec §2) and the search query. */
import { Type } from '@sinclair/typebox';
import { Defaulted, Nullable, StringEnum, nameText } from './common.schema.ts';
import { SEARCH_TYPES } from './vocabulary.ts';

export const SearchQuery = Type.Object({
  q: nameText(200, {
    description:
      'Words to find; each matches as a prefix ("laun" finds "Launch"), and near spellings of names match too',
  }),
  type: Type.Optional(
    StringEnum(SEARCH_TYPES, { description: 'Only results of this type; omit for all' }),
  ),
  size: Defaulted(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
});

export const SearchResultSchema = Type.Object({
  id: Type.String(),
  type: StringEnum(SEARCH_TYPES),
  title: Type.String(),
  flowId: Nullable(
    Type.String({
      description: 'The flow itself for a flow, the flow holding a task, null for a template',
    }),
  ),
  url: Type.String({ format: 'uri', description: 'Where it lives in the app' }),
});
