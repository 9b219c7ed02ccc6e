/** Task routes under /v1/flows/{flowId} (CONTRACT §3, §6): thin handlers over the task services. */
import type { Static } from '@sinclair/typebox';
import { json, noContent, route, type Route } from '../http/route.ts';
import type { Principal } from '../../services/auth/principal.ts';
import type { FlowContext } from '../../services/flows/flows.service.ts';
import type { TaskView } from '../../services/flows/flow-body.ts';
import {
  addAttachment,
  addComment,
  addDeliverable,
  attachmentFile,
  listAttachments,
  listComments,
} from '../../services/flows/task-items.service.ts';
import {
  addDependency,
  createTask,
  deleteTask,
  removeDependency,
  requireTask,
  updateTaskPlan,
} from '../../services/flows/tasks.service.ts';
import {
  assignTask,
  completeTask,
  reopenTask,
  startTask,
} from '../../services/flows/transitions.service.ts';
import { listOf, lookupId, pathParams } from '../../contract/common.schema.ts';
import {
  DeliverableSchema,
  FlowParams,
  TaskParams,
  TaskSchema,
} from '../../contract/flow.schema.ts';
import {
  AssignBody,
  AttachmentQuery,
  AttachmentSchema,
  CommentBody,
  CommentSchema,
  CompleteSchema,
  CreateTaskBody,
  DeliverableBody,
  DependencyBody,
  ItemsQuery,
  PatchTaskBody,
  TaskPageQuery,
  TaskPageSchema,
} from '../../contract/task.schema.ts';
import { taskPage } from '../../services/flows/task-page.ts';
import { fileReply, quotaBeforeBody, uploadType } from './files.ts';
import type { Services } from '../deps.ts';

const TASKS = '/v1/flows/{flowId}/tasks';
const TASK = `${TASKS}/{taskId}`;

export function taskRoutes(services: Services): Route[] {
  const { sql, registry, config, files } = services;
  const context = (ctx: { principal: Principal }): FlowContext => ({
    sql,
    registry,
    principal: ctx.principal,
  });
  const taskReply = <const S extends number>(
    status: S,
    snapshot: { taskView(id: string): TaskView },
    id: string,
  ) => json(status, snapshot.taskView(id));
  const write = {
    auth: 'bearer',
    scopes: ['flows:write'],
    minRole: 'member',
    tags: ['Tasks'],
  } as const;
  const work = {
    auth: 'bearer',
    scopes: ['work:write'],
    minRole: 'member',
    tags: ['Work'],
  } as const;
  const read = { auth: 'bearer', scopes: ['flows:read'], tags: ['Tasks'] } as const;
  const taskResponse = (description: string) => ({ 200: { description, schema: TaskSchema } });
  const versionOf = async (ctx: { principal: Principal; params: { flowId: string } }) =>
    (await registry.snapshot(ctx.principal.workspaceId, ctx.params.flowId)).version;
  // The query's values as validated: integers, and statuses the schema's pattern allows.
  const pageTag = (
    ctx: { params: { flowId: string }; query: Static<typeof TaskPageQuery> },
    version: number,
  ) => {
    const { size, from, status = '', changedSince = '' } = ctx.query;
    return `${ctx.params.flowId}.v${version}.tasks.${size}.${from}.${status}.${changedSince}`;
  };

  return [
    route({
      ...write,
      method: 'POST',
      path: TASKS,
      operationId: 'createTask',
      summary: 'Create a task and link it in (after/before), or a sub-task (parentId)',
      params: FlowParams,
      body: CreateTaskBody,
      errors: ['CIRCULAR_DEPENDENCY', 'DOWNSTREAM_STARTED', 'TASK_STARTED'],
      responses: { 201: { description: 'The new task', schema: TaskSchema } },
      handler: async (ctx) => {
        const { snapshot, taskId } = await createTask(context(ctx), ctx.params.flowId, ctx.body);
        return taskReply(201, snapshot, taskId);
      },
    }),
    route({
      ...read,
      method: 'GET',
      path: TASKS,
      guest: 'read',
      operationId: 'listTasks',
      summary:
        "A page of the flow's tasks in flow order; changedSince: only what changed after a version",
      params: FlowParams,
      query: TaskPageQuery,
      // Before the snapshot is read: a poll that changed nothing is answered 304 at once.
      etag: async (ctx) => pageTag(ctx, await versionOf(ctx)),
      responses: { 200: { description: 'A page of tasks', schema: TaskPageSchema } },
      handler: async (ctx) => {
        const { workspaceId } = ctx.principal;
        const snapshot = await registry.snapshotAtLeast(
          workspaceId,
          ctx.params.flowId,
          ctx.query.changedSince ?? 0,
        );
        return json(200, taskPage(snapshot, ctx.query), {
          etag: pageTag(ctx, snapshot.version),
        });
      },
    }),
    route({
      ...read,
      method: 'GET',
      path: TASK,
      guest: 'read',
      operationId: 'getTask',
      summary: 'A task with its derived state',
      params: TaskParams,
      responses: taskResponse('The task'),
      handler: async (ctx) => {
        const snapshot = await registry.snapshot(ctx.principal.workspaceId, ctx.params.flowId);
        requireTask(snapshot, ctx.params.taskId);
        return json(200, snapshot.taskView(ctx.params.taskId), {
          etag: `${snapshot.flow.id}.v${snapshot.version}.${ctx.params.taskId}`,
        });
      },
    }),
    route({
      ...write,
      method: 'PATCH',
      path: TASK,
      operationId: 'updateTask',
      summary: 'Change name, description or estimate (refused once work started)',
      params: TaskParams,
      body: PatchTaskBody,
      errors: ['TASK_STARTED'],
      responses: taskResponse('The task'),
      handler: async (ctx) =>
        taskReply(
          200,
          await updateTaskPlan(context(ctx), ctx.params.flowId, ctx.params.taskId, ctx.body),
          ctx.params.taskId,
        ),
    }),
    route({
      ...write,
      method: 'DELETE',
      path: TASK,
      operationId: 'deleteTask',
      summary: 'Delete a task; its dependents now depend on its dependencies',
      params: TaskParams,
      responses: { 204: { description: 'Deleted' } },
      handler: async (ctx) => (
        await deleteTask(context(ctx), ctx.params.flowId, ctx.params.taskId),
        noContent()
      ),
    }),
    route({
      ...write,
      method: 'POST',
      path: `${TASK}/dependencies`,
      operationId: 'addDependency',
      summary: 'Make the task wait on another',
      params: TaskParams,
      body: DependencyBody,
      errors: ['CIRCULAR_DEPENDENCY', 'TASK_STARTED'],
      responses: taskResponse('The task'),
      handler: async (ctx) =>
        taskReply(
          200,
          await addDependency(context(ctx), ctx.params.flowId, ctx.params.taskId, ctx.body.taskId),
          ctx.params.taskId,
        ),
    }),
    route({
      ...write,
      method: 'DELETE',
      path: `${TASK}/dependencies/{dependsOnId}`,
      operationId: 'removeDependency',
      summary: 'Stop the task waiting on another',
      params: pathParams({ flowId: lookupId(), taskId: lookupId(), dependsOnId: lookupId() }),
      responses: taskResponse('The task'),
      handler: async (ctx) =>
        taskReply(
          200,
          await removeDependency(
            context(ctx),
            ctx.params.flowId,
            ctx.params.taskId,
            ctx.params.dependsOnId,
          ),
          ctx.params.taskId,
        ),
    }),
    route({
      ...work,
      method: 'POST',
      path: `${TASK}/start`,
      operationId: 'startTask',
      summary: 'ready → in_progress',
      params: TaskParams,
      errors: ['TASK_BLOCKED', 'INVALID_TRANSITION'],
      responses: taskResponse('The task'),
      handler: async (ctx) =>
        taskReply(
          200,
          await startTask(context(ctx), ctx.params.flowId, ctx.params.taskId),
          ctx.params.taskId,
        ),
    }),
    route({
      ...work,
      method: 'POST',
      path: `${TASK}/complete`,
      operationId: 'completeTask',
      summary: 'in_progress → done; lists what it unblocked',
      params: TaskParams,
      errors: ['INVALID_TRANSITION', 'SUBTASKS_OUTSTANDING', 'DELIVERABLE_MISSING'],
      responses: {
        200: { description: 'The task and the tasks it made ready', schema: CompleteSchema },
      },
      handler: async (ctx) => {
        const { snapshot, unblocked } = await completeTask(
          context(ctx),
          ctx.params.flowId,
          ctx.params.taskId,
        );
        return json(200, {
          task: snapshot.taskView(ctx.params.taskId),
          unblocked: unblocked.map((id) => snapshot.taskView(id)),
        });
      },
    }),
    route({
      ...work,
      method: 'POST',
      path: `${TASK}/reopen`,
      operationId: 'reopenTask',
      summary: 'done → in_progress; refused once downstream work started',
      params: TaskParams,
      errors: ['INVALID_TRANSITION', 'DOWNSTREAM_STARTED'],
      responses: taskResponse('The task'),
      handler: async (ctx) =>
        taskReply(
          200,
          await reopenTask(context(ctx), ctx.params.flowId, ctx.params.taskId),
          ctx.params.taskId,
        ),
    }),
    route({
      ...work,
      method: 'POST',
      path: `${TASK}/assign`,
      operationId: 'assignTask',
      summary: 'Assign to a member, or null to unassign',
      params: TaskParams,
      body: AssignBody,
      responses: taskResponse('The task'),
      handler: async (ctx) =>
        taskReply(
          200,
          await assignTask(context(ctx), ctx.params.flowId, ctx.params.taskId, ctx.body.assigneeId),
          ctx.params.taskId,
        ),
    }),
    route({
      ...read,
      method: 'GET',
      path: `${TASK}/comments`,
      guest: 'read',
      operationId: 'listComments',
      summary: 'Comments, oldest first',
      params: TaskParams,
      query: ItemsQuery,
      responses: { 200: { description: 'Comments', schema: listOf(CommentSchema) } },
      handler: async (ctx) =>
        json(
          200,
          await listComments(context(ctx), ctx.params.flowId, ctx.params.taskId, ctx.query),
        ),
    }),
    route({
      ...work,
      minRole: 'member',
      method: 'POST',
      path: `${TASK}/comments`,
      guest: 'comment',
      operationId: 'addComment',
      summary: 'Comment on a task',
      params: TaskParams,
      body: CommentBody,
      responses: { 201: { description: 'The comment', schema: CommentSchema } },
      handler: async (ctx) =>
        json(
          201,
          await addComment(context(ctx), ctx.params.flowId, ctx.params.taskId, ctx.body.body),
        ),
    }),
    route({
      ...read,
      method: 'GET',
      path: `${TASK}/attachments`,
      operationId: 'listAttachments',
      summary: 'Files attached to a task',
      params: TaskParams,
      query: ItemsQuery,
      responses: { 200: { description: 'Attachments', schema: listOf(AttachmentSchema) } },
      handler: async (ctx) =>
        json(
          200,
          await listAttachments(context(ctx), ctx.params.flowId, ctx.params.taskId, ctx.query),
        ),
    }),
    route({
      ...work,
      method: 'POST',
      path: `${TASK}/attachments`,
      operationId: 'uploadAttachment',
      summary:
        'Upload a file (raw bytes with Content-Type); kind=deliverable with deliverableId hands in a required deliverable',
      params: TaskParams,
      query: AttachmentQuery,
      bodyKind: 'upload',
      maxBodyBytes: config.maxUploadBytes,
      beforeBody: quotaBeforeBody(files),
      errors: ['PAYLOAD_TOO_LARGE'],
      responses: { 201: { description: 'The attachment', schema: AttachmentSchema } },
      handler: async (ctx) =>
        json(
          201,
          await addAttachment(context(ctx), files, ctx.params.flowId, ctx.params.taskId, {
            ...ctx.query,
            mimeType: uploadType(ctx.headers),
            blob: ctx.upload,
          }),
        ),
    }),
    route({
      ...read,
      method: 'GET',
      path: `${TASK}/attachments/{attachmentId}/content`,
      operationId: 'getAttachmentContent',
      summary: 'The bytes of a file',
      params: pathParams({ flowId: lookupId(), taskId: lookupId(), attachmentId: lookupId() }),
      responses: {
        200: {
          description: 'The file',
          contentType: '*/*',
          schema: { type: 'string', contentMediaType: 'application/octet-stream' },
        },
      },
      handler: async (ctx) => {
        return fileReply(
          await attachmentFile(
            context(ctx),
            ctx.params.flowId,
            ctx.params.taskId,
            ctx.params.attachmentId,
          ),
          ctx.params.attachmentId,
        );
      },
    }),
    route({
      ...write,
      method: 'POST',
      path: `${TASK}/deliverables`,
      operationId: 'addDeliverable',
      summary: 'Require a file to be handed in before completion',
      params: TaskParams,
      body: DeliverableBody,
      errors: ['INVALID_TRANSITION'],
      responses: { 201: { description: 'The required deliverable', schema: DeliverableSchema } },
      handler: async (ctx) =>
        json(
          201,
          await addDeliverable(context(ctx), ctx.params.flowId, ctx.params.taskId, ctx.body.name),
        ),
    }),
  ];
}
