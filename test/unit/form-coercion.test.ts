import { describe, expect, it } from 'vitest';
import { coerce } from '../../src/http/form-coercion.ts';

const document = {
  components: {
    schemas: {
      Input: {
        type: 'object',
        required: ['note'],
        properties: {
          note: {
            type: 'object',
            required: ['title'],
            properties: {
              title: { type: 'string', minLength: 1 },
              slug: { type: ['string', 'null'] },
              is_private: { type: ['boolean', 'null'] },
              is_done: { type: 'boolean' },
              parent: { type: ['integer', 'null'] },
              count: { type: 'integer' },
            },
          },
          mentions: { type: 'array', items: { type: 'string' } },
          ids: { type: 'array', items: { type: 'integer' } },
        },
      },
    },
  },
};
const schema = { $ref: '#/components/schemas/Input' };

describe('form coercion along the request schema', () => {
  it.each([
    [{ note: { title: 'T', is_private: '1' } }, { note: { title: 'T', is_private: true } }],
    [{ note: { title: 'T', is_private: '0' } }, { note: { title: 'T', is_private: false } }],
    [{ note: { title: 'T', is_done: 'true' } }, { note: { title: 'T', is_done: true } }],
    [{ note: { title: 'T', is_done: 'false' } }, { note: { title: 'T', is_done: false } }],
    [{ note: { title: 'T', slug: '' } }, { note: { title: 'T', slug: null } }],
    [{ note: { title: 'T', parent: '' } }, { note: { title: 'T', parent: null } }],
    [{ note: { title: 'T', is_private: '' } }, { note: { title: 'T', is_private: null } }],
    [{ note: { title: 'T', count: '' } }, { note: { title: 'T' } }],
    [{ note: { title: '' } }, { note: { title: '' } }],
    [{ note: { title: 'T' }, mentions: 'alice' }, { note: { title: 'T' }, mentions: ['alice'] }],
    [{ note: { title: 'T' }, ids: { 1: '7', 0: '5' } }, { note: { title: 'T' }, ids: ['5', '7'] }],
    [{ note: { title: 'T' }, utf8: '✓' }, { note: { title: 'T' }, utf8: '✓' }],
  ])('%j becomes %j', (input, output) => {
    expect(coerce(document, input, schema)).toEqual(output);
  });

  it('leaves values of the wrong shape for the validator to reject', () => {
    expect(coerce(document, { note: { title: 'T', is_done: 'maybe' } }, schema)).toEqual({ note: { title: 'T', is_done: 'maybe' } });
  });
});
