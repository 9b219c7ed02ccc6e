/** Exports (spec §4): the delivery document as PDF, or the dependency diagram as PNG. */
import { route, type Route } from '../http/route.ts';
import { exportFlow, type ExportFormat } from '../../services/exports/exports.service.ts';
import { FlowParams } from '../../contract/flow.schema.ts';
import { BinaryFile, EXPORT_MEDIA_TYPES, ExportBody } from '../../contract/export.schema.ts';
import type { Services } from '../deps.ts';

export function exportRoutes(services: Services): Route[] {
  const { sql, registry, render, pool } = services;
  return [
    route({
      method: 'POST',
      path: '/v1/flows/{flowId}/exports',
      guest: 'read',
      operationId: 'exportFlow',
      summary: 'Download the flow as a PDF delivery document or a PNG diagram',
      tags: ['Flows'],
      auth: 'bearer',
      scopes: ['flows:read'],
      write: false,
      params: FlowParams,
      body: ExportBody,
      bodyOptional: true,
      errors: ['RENDER_FAILED', 'SERVICE_UNAVAILABLE'],
      responses: {
        200: {
          description:
            'The file, with Content-Disposition: attachment (PDF: application/pdf; PNG: image/png)',
          contentType: EXPORT_MEDIA_TYPES,
          schema: BinaryFile,
        },
      },
      handler: async (ctx) => {
        const format: ExportFormat = ctx.body.format;
        const file = await exportFlow(
          { sql, registry, render, pool, principal: ctx.principal },
          ctx.params.flowId,
          format,
        );
        return {
          status: 200,
          body: file.bytes,
          contentType: file.contentType,
          headers: { 'Content-Disposition': file.disposition },
        };
      },
    }),
  ];
}
