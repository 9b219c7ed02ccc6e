/**
 * Issue 17, item 9: archiving takes a published flow or brainstorm off the public web. All
 * four public addresses of each answer 404 at the very next request, in this process and in a
 * second one on the same database, even to a client revalidating a copy it already holds.
 * Archiving withdraws the link (issue 30, item 12): a restore comes back private, so an owner
 * who archived to kill a leaked link never gets it back; publishing again makes a new one.
 */
import t from 'tap';
import { startApp } from '../../src/compose.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { ok, startFlowServer } from '../helpers/flows.ts';
import { request } from '../helpers/server.ts';
import { publicPaths, seedPublished, pathOf } from '../web/public/helpers.ts';
import type { BrainstormSummary, Flow, FlowSummary, Refusal } from '../helpers/wire.ts';

t.test(
  'archive: every public address is 404 at once in every process; restore stays private, a new publish a new link',
  async (t) => {
    const s = await startFlowServer(t);
    const seeded = await seedPublished(t, s);
    const second = await startApp(
      loadConfig({ LOG_LEVEL: 'silent' }, { port: 0, databaseUrl: s.databaseUrl }),
    );
    t.teardown(() => second.close());
    const bases = [s.url, second.url];
    let flowPaths = publicPaths(seeded.flowPath, null);
    let boardPaths = publicPaths(null, seeded.boardPath);

    /** Every path from both processes; the ETags each answered with, to revalidate later. */
    const expect = async (
      paths: string[],
      status: number,
      what: string,
      etags = new Map<string, string>(),
    ) => {
      for (const base of bases) {
        for (const path of paths) {
          const key = `${base} ${path}`;
          const tag = etags.get(key);
          const res = await request<Refusal>(
            base,
            'GET',
            path,
            tag ? { headers: { 'if-none-match': tag } } : {},
          );
          t.equal(
            res.status,
            status,
            `${what}: ${path} (${base === s.url ? 'first' : 'second'} process${tag ? ', revalidating' : ''})`,
          );
          if (status === 200 && res.headers.get('etag')) etags.set(key, res.headers.get('etag')!);
          if (status === 404 && (path.endsWith('.json') || path.endsWith('.svg')))
            t.equal(res.body?.error?.code, 'NOT_FOUND');
        }
      }
      return etags;
    };

    // Both processes have drawn and cached every rendition; clients hold their ETags.
    const flowTags = await expect(flowPaths, 200, 'published flow');
    const boardTags = await expect(boardPaths, 200, 'published brainstorm');

    t.test('a flow', async (t) => {
      const before = await ok<Flow>(t, s, 'GET', `/v1/flows/${seeded.flowId}`);
      t.equal(
        (await s.api('DELETE', `/v1/flows/${seeded.flowId}`, { token: s.adminKey })).status,
        204,
        'archived',
      );
      await expect(flowPaths, 404, 'archived flow', flowTags);
      await expect(boardPaths, 200, 'the brainstorm is not affected');

      const restored = await ok<FlowSummary>(t, s, 'POST', `/v1/flows/${seeded.flowId}/restore`);
      t.equal(restored.public, false, 'restored private');
      t.equal(restored.publicUrl, null);
      await expect(flowPaths, 404, 'restored flow, old link');
      const republished = await ok<FlowSummary>(t, s, 'POST', `/v1/flows/${seeded.flowId}/publish`);
      t.not(republished.publicUrl, before.publicUrl, 'publishing again makes a new link');
      await expect(flowPaths, 404, 'the old link stays dead');
      flowPaths = publicPaths(pathOf(republished.publicUrl), null);
      await expect(flowPaths, 200, 'the new link works');
    });

    t.test('a brainstorm, archived through the second process', async (t) => {
      const archived = await request(second.url, 'DELETE', `/v1/brainstorms/${seeded.boardId}`, {
        token: s.adminKey,
      });
      t.equal(archived.status, 204, 'archived');
      await expect(boardPaths, 404, 'archived brainstorm', boardTags);
      await expect(flowPaths, 200, 'the flow is not affected');

      const restored = await ok<BrainstormSummary>(
        t,
        s,
        'POST',
        `/v1/brainstorms/${seeded.boardId}/restore`,
      );
      t.equal(restored.public, false, 'restored private');
      t.equal(restored.publicUrl, null);
      await expect(boardPaths, 404, 'restored brainstorm, old link');
      const republished = await ok<BrainstormSummary>(
        t,
        s,
        'POST',
        `/v1/brainstorms/${seeded.boardId}/publish`,
      );
      t.not(pathOf(republished.publicUrl), seeded.boardPath, 'publishing again makes a new link');
      await expect(boardPaths, 404, 'the old link stays dead');
      boardPaths = publicPaths(null, pathOf(republished.publicUrl));
      await expect(boardPaths, 200, 'the new link works');
    });
  },
);
