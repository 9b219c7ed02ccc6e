/** Placeholder: routes arrive with their issue. */
import type { Route } from '../http/route.ts';
import type { Services } from './services.ts';

export function shareRoutes(_services: Services): Route[] {
  return [];
}
