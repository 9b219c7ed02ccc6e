/** What the public-view tests share: a published flow and brainstorm, and their eight addresses. */
import type { Test } from 'tap';
import { member, newFlow, ok } from '../../helpers/flows.ts';
import type { TestServer } from '../../helpers/server.ts';

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

export const pathOf = (publicUrl: string) => new URL(publicUrl).pathname;

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
  const design = flow.tasks.find((task: { name: string }) => task.name === 'Design the box');
  const taskPath = `/v1/flows/${flow.id}/tasks/${design.id}`;
  const comment = await ok(
    t,
    s,
    'POST',
    `${taskPath}/comments`,
    { body: 'MARK-TASK-COMMENT' },
    201,
  );
  const deliverable = await ok(
    t,
    s,
    'POST',
    `${taskPath}/deliverables`,
    { name: 'MARK-DELIVERABLE-NAME' },
    201,
  );
  const file = await s.api('POST', `${taskPath}/attachments?name=MARK-ATTACHMENT-NAME.txt`, {
    token: s.adminKey,
    raw: 'MARK-ATTACHMENT-BYTES',
    headers: { 'content-type': 'text/plain' },
  });
  t.equal(file.status, 201, 'attachment uploaded');

  const board = (
    await s.api('POST', '/v1/brainstorms', {
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
  const idea = `/v1/brainstorms/${board.id}/ideas/${board.ideas[0].id}`;
  const ideaComment = await ok(
    t,
    s,
    'POST',
    `${idea}/comments`,
    { body: 'MARK-IDEA-COMMENT' },
    201,
  );
  const ideaFile = await s.api('POST', `${idea}/attachments?name=MARK-IDEA-FILE.txt`, {
    token: s.adminKey,
    raw: 'MARK-IDEA-BYTES',
    headers: { 'content-type': 'text/plain' },
  });
  t.equal(ideaFile.status, 201, 'idea file uploaded');

  const flowSummary = await ok(t, s, 'POST', `/v1/flows/${flow.id}/publish`);
  const boardSummary = await ok(t, s, 'POST', `/v1/brainstorms/${board.id}/publish`);
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
