/**
 * Request body bytes a process holds in memory at once, across requests. Bytes are taken as
 * they arrive, never for a length that is only declared: a client that declares 4 MiB and
 * sends nothing holds nothing (issue 30, item 1: seventeen such connections once made every
 * write answer 503). Three bounds apply to every byte: the whole allowance
 * (MAX_BUFFERED_BODY_BYTES), a share of it per client address (IPv6 by /64), and a slice of it
 * for requests without a credential, so neither one address nor strangers can hold it all.
 */
import { addressBucket } from '../../platform/client-address.ts';

/** The share of the allowance one client address may hold. */
export const ADDRESS_SHARE = 1 / 4;
/** The slice of the allowance requests without a credential may hold, all together. */
export const UNAUTHENTICATED_SLICE = 1 / 8;

/** Which bound a body ran into. */
export type BodyBound = 'process' | 'address' | 'unauthenticated';

export class BodyAllowance {
  private held = 0;
  private unauthenticated = 0;
  private readonly byAddress = new Map<string, number>();
  readonly addressShare: number;
  readonly unauthenticatedSlice: number;

  constructor(readonly total: number) {
    this.addressShare = Math.floor(total * ADDRESS_SHARE);
    this.unauthenticatedSlice = Math.floor(total * UNAUTHENTICATED_SLICE);
  }

  /** What one request holds: taken as its body arrives, given back whole when it is done. */
  hold(remoteAddress: string, authenticated: boolean): BodyHold {
    return new BodyHold(this, addressBucket(remoteAddress), authenticated);
  }

  /** Takes `bytes` under every bound, or none of them: the bound that refused. */
  take(address: string, authenticated: boolean, bytes: number): BodyBound | null {
    const ofAddress = this.byAddress.get(address) ?? 0;
    if (this.held + bytes > this.total) return 'process';
    if (ofAddress + bytes > this.addressShare) return 'address';
    if (!authenticated && this.unauthenticated + bytes > this.unauthenticatedSlice)
      return 'unauthenticated';
    this.held += bytes;
    this.byAddress.set(address, ofAddress + bytes);
    if (!authenticated) this.unauthenticated += bytes;
    return null;
  }

  give(address: string, authenticated: boolean, bytes: number): void {
    if (bytes === 0) return;
    this.held -= bytes;
    if (!authenticated) this.unauthenticated -= bytes;
    const left = (this.byAddress.get(address) ?? 0) - bytes;
    if (left > 0) this.byAddress.set(address, left);
    else this.byAddress.delete(address);
  }
}

export class BodyHold {
  private held = 0;

  constructor(
    private readonly allowance: BodyAllowance,
    private readonly address: string,
    private readonly authenticated: boolean,
  ) {}

  /** Takes room for `bytes` more; the bound that refused, or null. */
  take(bytes: number): BodyBound | null {
    const refused = this.allowance.take(this.address, this.authenticated, bytes);
    if (refused === null) this.held += bytes;
    return refused;
  }

  /** Gives back everything this request holds (idempotent). */
  release(): void {
    this.allowance.give(this.address, this.authenticated, this.held);
    this.held = 0;
  }
}
