/** The search types, for the web layer, which reaches storage only through services. */
export { SEARCH_TYPES, type SearchType } from '../../storage/search.store.ts';
