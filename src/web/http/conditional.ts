/**
 * Conditional GETs and representations: every JSON 200 carries an ETag (from the route's
 * version when it has one, else from the bytes), If-None-Match answers 304 and gives the
 * budget back, and `Accept: application/msgpack` gets the same document as MessagePack,
 * tagged apart and cached per version.
 */
import fresh from 'fresh';
import type { Budgets } from './budgets.ts';
import { etagOf, etagOfBody } from './etag.ts';
import { MsgpackCache, msgpackTag, msgpackWanted } from './msgpack.ts';
import type { OutgoingResponse } from './request.ts';
import type { AnyReply, RequestContext, Route } from './route.ts';

/** MessagePack asked for (GET): its type, and the key its bytes are cached under with the tag. */
export interface Representation {
  type: string;
  key: string;
}

export class Conditional {
  private readonly msgpack = new MsgpackCache();

  constructor(private readonly budgets: Budgets) {}

  /** The MessagePack type a GET asks for, or null for JSON. */
  wanted(method: string, accept: string | undefined): string | null {
    return method === 'GET' ? msgpackWanted(accept) : null;
  }

  /** A version-backed tag answers 304 before the handler renders anything; null when it does not match. */
  async early(
    route: Route,
    ctx: RequestContext,
    ifNoneMatch: string,
    msgpack: string | null,
    headers: Record<string, string>,
    rateKey: string | null,
  ): Promise<OutgoingResponse | null> {
    const tag = await route.etag!(ctx);
    const etag = tag === null ? null : msgpack ? msgpackTag(etagOf(tag)) : etagOf(tag);
    if (etag === null || !held(ifNoneMatch, etag)) return null;
    varyByAccept(headers);
    return this.notModified(etag, headers, rateKey, route);
  }

  /**
   * A GET's 200 as rendered: tags it (ETag, Vary), turns it into MessagePack when asked, and
   * answers 304 when the client holds it already. Returns the bytes to send, or the 304.
   */
  tagged(
    route: Route,
    reply: AnyReply,
    payload: string | Buffer,
    headers: Record<string, string>,
    ifNoneMatch: string | undefined,
    rateKey: string | null,
    representation: Representation | null,
  ): string | Buffer | OutgoingResponse {
    let tag = reply.etag !== undefined ? etagOf(reply.etag) : etagOfBody(payload);
    if (headers['Content-Type']!.startsWith('application/json')) {
      varyByAccept(headers);
      // A reply the route already compressed (public views) is sent as it is.
      if (representation && !headers['Content-Encoding']) {
        tag = msgpackTag(tag);
        if (!held(ifNoneMatch, tag))
          payload = this.msgpack.encode(`${representation.key} ${tag}`, payload);
        headers['Content-Type'] = representation.type;
      }
    }
    headers['ETag'] = tag;
    return held(ifNoneMatch, tag) ? this.notModified(tag, headers, rateKey, route) : payload;
  }

  private notModified(
    tag: string,
    headers: Record<string, string>,
    rateKey: string | null,
    route: Route,
  ): OutgoingResponse {
    // A 304 spends nothing of the caller's budget.
    if (rateKey) this.budgets.refund(rateKey, route.auth === 'bearer', headers);
    headers['ETag'] = tag;
    delete headers['Content-Type'];
    return { status: 304, headers, body: null };
  }
}

/** JSON GETs also answer MessagePack (msgpack.ts): the answer varies by Accept. */
function varyByAccept(headers: Record<string, string>): void {
  headers['Vary'] = headers['Vary'] ? `${headers['Vary']}, Accept` : 'Accept';
}

/** The client holds this representation already: If-None-Match names its tag (weakly) or `*`. */
function held(ifNoneMatch: string | undefined, etag: string): boolean {
  return fresh({ 'if-none-match': ifNoneMatch }, { etag });
}
