// A validator for one of the OpenAPI document's component schemas (`Problem`, `OAuthError`, `ChangeEvent`, ...), for
// tests that check a body the response validator does not see (routes outside /api/v1, webhook messages).
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { loadOpenApiDocument } from '../../src/http/openapi.ts';

let ajv: Ajv | undefined;

export function documentSchema(name: string): ValidateFunction {
  if (!ajv) {
    ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ components: loadOpenApiDocument().components } as object, 'doc');
  }
  return ajv.compile({ $ref: `doc#/components/schemas/${name}` });
}
