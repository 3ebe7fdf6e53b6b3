// The operations the OpenAPI document describes that are not built yet: each answers 501 problem details with code
// `not_implemented`. They are the entries marked `notBuilt` in the operation table (operations.ts), the only list of
// them; every issue that builds an operation replaces its entry there with a handler.
export { notImplementedOperations } from './operations.ts';
