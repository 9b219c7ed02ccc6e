/** What the public-view tests share: a published flow and brainstorm, and their eight addresses. */
import type { Test } from 'tap';
import { member, newFlow, ok, taskNamed } from '../../helpers/flows.ts';
import { item, type TestServer } from '../../helpers/server.ts';
import type {
  Attachment,
  Brainstorm,
  BrainstormSummary,
  Comment,
  FlowSummary,
  IdeaComment,
  Task,
} from '../../helpers/wire.ts';

export interface Published {
  flowId: string;
  boardId: string;
  flowPath: string;
  boardPath: string;
  /** Every id, name and text the public must never see. */
  secrets: string[];
}

/** `{public_url}/flows/{token}` → the eight public paths of that token's kind and the other's. */
export function publicPaths(flowPath: string | null, boardPath: string | null): string[] {
  const four = (path: string) => {
    const [prefix, kind, token] = path.match(/^(.*)\/(flows|brainstorms)\/([^/]+)$/)!.slice(1);
    return [
      `${prefix}/${kind}/${token}`,
      `${prefix}/${kind}/${token}.json`,
      `${prefix}/${kind}/${token}/diagram.svg`,
      `${prefix}/embed/${kind}/${token}`,
    ];
  };
  return [...(flowPath ? four(flowPath) : []), ...(boardPath ? four(boardPath) : [])];
}

export function pathOf(publicUrl: string | null): string {
  if (publicUrl === null) throw new Error('not published: no publicUrl');
  return new URL(publicUrl).pathname;
}

/**
 * A flow and a brainstorm whose assignees, descriptions, comments, attachment and
 * deliverable names and notes all carry marker strings, both published.
 */
export async function seedPublished(t: Test, s: TestServer): Promise<Published> {
  const ann = await member(s, 'Ann MARK-ASSIGNEE-NAME');
  const flow = await newFlow(t, s, {
    name: 'Launch plan',
    description: 'MARK-FLOW-DESCRIPTION',
    dueDate: '2031-03-03',
    tasks: [
      {
        name: 'Design the box',
        description: 'MARK-TASK-DESCRIPTION',
        estimateHours: 8,
        assigneeId: ann,
      },
      { name: 'Build the box', estimateHours: 16, after: [0] },
      { name: 'Ship the box', after: [1], assigneeId: ann },
    ],
  });
  const design = taskNamed(flow, 'Design the box');
  const taskPath = `/v1/flows/${flow.id}/tasks/${design.id}`;
  const comment = await ok<Comment>(
    t,
    s,
    'POST',
    `${taskPath}/comments`,
    { body: 'MARK-TASK-COMMENT' },
    201,
  );
  const deliverable = await ok<Task['requiredDeliverables'][number]>(
    t,
    s,
    'POST',
    `${taskPath}/deliverables`,
    { name: 'MARK-DELIVERABLE-NAME' },
    201,
  );
  const file = await s.api<Attachment>(
    'POST',
    `${taskPath}/attachments?name=MARK-ATTACHMENT-NAME.txt`,
    {
      token: s.adminKey,
      raw: 'MARK-ATTACHMENT-BYTES',
      headers: { 'content-type': 'text/plain' },
    },
  );
  t.equal(file.status, 201, 'attachment uploaded');

  const board = (
    await s.api<Brainstorm>('POST', '/v1/brainstorms', {
      token: s.adminKey,
      body: {
        name: 'Ideas board',
        ideas: [
          { title: 'Root idea', tags: ['growth'], notes: 'MARK-IDEA-NOTE', assigneeId: ann },
          { title: 'Child idea', parent: 0 },
        ],
      },
    })
  ).body;
  t.ok(board?.id, 'brainstorm created');
  const idea = `/v1/brainstorms/${board.id}/ideas/${item(board.ideas).id}`;
  const ideaComment = await ok<IdeaComment>(
    t,
    s,
    'POST',
    `${idea}/comments`,
    { body: 'MARK-IDEA-COMMENT' },
    201,
  );
  const ideaFile = await s.api<Attachment>('POST', `${idea}/attachments?name=MARK-IDEA-FILE.txt`, {
    token: s.adminKey,
    raw: 'MARK-IDEA-BYTES',
    headers: { 'content-type': 'text/plain' },
  });
  t.equal(ideaFile.status, 201, 'idea file uploaded');

  const flowSummary = await ok<FlowSummary>(t, s, 'POST', `/v1/flows/${flow.id}/publish`);
  const boardSummary = await ok<BrainstormSummary>(
    t,
    s,
    'POST',
    `/v1/brainstorms/${board.id}/publish`,
  );
  return {
    flowId: flow.id,
    boardId: board.id,
    flowPath: pathOf(flowSummary.publicUrl),
    boardPath: pathOf(boardSummary.publicUrl),
    secrets: [
      'MARK-',
      ann,
      comment.id,
      deliverable.id,
      file.body.id,
      ideaComment.id,
      ideaFile.body.id,
    ],
  };
}
