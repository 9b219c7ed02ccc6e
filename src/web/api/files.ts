/** What the upload and download routes of files (task attachments, idea files) share. */
import type { Files } from '../../services/files/files.service.ts';
import { storedMediaType } from '../../services/files/media-type.ts';
import type { Reply, BeforeBodyHead } from '../http/route.ts';
import type { Principal } from '../../services/auth/principal.ts';

/** An upload is refused from its head when the workspace has no room for the length it declares. */
export function quotaBeforeBody(files: Files): (head: BeforeBodyHead<Principal>) => Promise<void> {
  return ({ principal, headers }) =>
    files.admit(principal.workspaceId, Number(headers['content-length'] ?? 0));
}

/**
 * A stored file as a download. Whatever its type says, a browser saves it rather than showing
 * it in our origin, and even shown it may run nothing (`sandbox`).
 */
export function fileReply(
  file: { name: string; mimeType: string; content: Buffer },
  etag: string,
): Reply {
  return {
    // Through storedMediaType again: rows stored before it may hold `*/*`.
    status: 200,
    body: file.content,
    contentType: storedMediaType(file.mimeType),
    etag,
    headers: {
      'Content-Disposition': `attachment; filename*=UTF-8''${encodeURIComponent(file.name)}`,
      'Content-Security-Policy': 'sandbox',
    },
  };
}

/** The Content-Type an upload declared, when it names a concrete media type; else application/octet-stream. */
export const uploadType = (headers: Readonly<Record<string, string>>): string =>
  storedMediaType(headers['content-type']);
