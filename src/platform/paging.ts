/**
 * Offset paging, the one shape every list of the API takes and answers: a request of `size`
 * items from position `from` (the web layer's `pageQuery` schema bounds and defaults them),
 * and a page of those items with the `total` the whole list holds.
 */
export interface PageRequest {
  size: number;
  from: number;
}

export interface Page<T> {
  total: number;
  items: T[];
}
