/** What search finds: the schema's enum and the store's queries both follow this list. */
export const SEARCH_TYPES = ['flow', 'task', 'template'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];
