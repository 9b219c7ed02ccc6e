/** The export request (spec §4, CONTRACT §1): an optional body whose `format` defaults to pdf. */
import { Type } from '@sinclair/typebox';
import { Defaulted, StringEnum } from './common.schema.ts';

export const EXPORT_FORMATS = ['pdf', 'png'] as const;

export const ExportBody = Type.Object(
  {
    format: Defaulted(
      StringEnum(EXPORT_FORMATS, {
        default: 'pdf',
        description:
          '`pdf`: the delivery document (diagram and execution plan); `png`: the dependency diagram only',
      }),
    ),
  },
  { additionalProperties: false },
);

/** OpenAPI 3.1 spelling of a binary body (no `format: binary`). */
export const BinaryFile = Type.String({ contentMediaType: 'application/octet-stream' });
export const EXPORT_MEDIA_TYPES = ['application/pdf', 'image/png'] as const;
