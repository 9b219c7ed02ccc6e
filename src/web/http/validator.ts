/**
 * ajv (draft 2020-12, the dialect of OpenAPI 3.1) compiling the very schema objects the
 * OpenAPI document publishes. Failures become 400 VALIDATION_FAILED listing each problem
 * with its JSON pointer.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { validationFailed, type Location, type ValidationProblem } from '../../platform/errors.ts';
import type { Schema } from './route.ts';


function makeAjv(coerce: boolean): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, coerceTypes: coerce ? 'array' : false, useDefaults: true });
  addFormats.default(ajv);
  return ajv;
}

const bodies = makeAjv(false);
// Query and path values arrive as strings: coerce them to the declared types.
const strings = makeAjv(true);

export function compile<T>(schema: Schema, location: Location): (value: unknown) => T {
  const validate: ValidateFunction = (location === 'body' ? bodies : strings).compile(schema);
  return (value: unknown): T => {
    if (validate(value)) return value as T;
    throw validationFailed(problems(validate.errors ?? [], location));
  };
}

function problems(errors: ErrorObject[], location: Location): ValidationProblem[] {
  return errors.slice(0, 50).map((error) => {
    let pointer = error.instancePath;
    let message = error.message ?? 'is not valid';
    if (error.keyword === 'additionalProperties') {
      pointer += `/${escape(String(error.params.additionalProperty))}`;
      message = 'is not a known field';
    } else if (error.keyword === 'required') {
      pointer += `/${escape(String(error.params.missingProperty))}`;
      message = 'is required';
    }
    return { in: location, pointer, message };
  });
}

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
