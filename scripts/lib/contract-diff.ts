// Compares the OpenAPI document with the previous release's (`openapi/released/`) and says which changes would break
// a client written against the release. The comparison and its classification are api-smart-diff's (it reads
// OpenAPI 3.1, follows every $ref, circular ones too, and classifies each change as breaking, non-breaking,
// deprecated or annotation). Two rules of ours are laid on top, both said in README ("Keeping the contract"):
//   - removing a property from an answer is breaking even when the property was optional (a client reads it);
//     api-smart-diff counts only a required one;
//   - an answer's field whose `type` changes is breaking (a client parses the old type); api-smart-diff reverses its
//     rules for inputs in answers, and calls integer -> string there non-breaking;
//   - a new value of the `code` of a problem answer (application/problem+json) is not breaking: the codes grow with
//     every rule the service gains, and a client must treat a code it does not know by its HTTP status;
//   - a new value of any other enum of an answer (a new kind of commented object, of search match, of event) is not
//     breaking either, but it is reported (`widened`): api-smart-diff calls it breaking, oasdiff a warning
//     (response-property-enum-value-added), and issue 22 lists only a removed one. A client must skip a kind it does
//     not know (README, "Keeping the contract"); an input's enum losing a value stays breaking.
// A breaking change is allowed only when `info.version` starts a new major version.
import { apiCompare, type Diff } from 'api-smart-diff';

export type OpenApiDocument = { info: { version: string; [key: string]: unknown }; [key: string]: unknown };

export type ContractVerdict = {
  before: string;
  after: string;
  /** the breaking changes, one per place in the document where a client meets it */
  breaking: Diff[];
  /** new values of answers' enums (not problem codes): allowed, and reported */
  widened: Diff[];
  /** `info.version` starts a new major version, so the breaking changes are allowed */
  newMajor: boolean;
  /** what is wrong with the versions themselves (a version that goes back, one that is not x.y.z) */
  problems: string[];
  ok: boolean;
};

const SEMVER = /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/;

const inAnswer = (path: Diff['path']) => path[0] === 'paths' && path.includes('responses');

const isRemovedAnswerProperty = (diff: Diff) =>
  diff.action === 'remove' && inAnswer(diff.path) && diff.path.at(-2) === 'properties';

const isRetypedAnswerField = (diff: Diff) =>
  diff.action === 'replace' && inAnswer(diff.path) && diff.path.at(-1) === 'type';

/** A value added to an enum of an answer (problem codes included). */
const isNewAnswerEnumValue = (diff: Diff) => diff.action === 'add' && inAnswer(diff.path) && diff.path.at(-2) === 'enum';

const isNewProblemCode = (diff: Diff) => {
  const p = diff.path;
  return (
    diff.action === 'add' &&
    inAnswer(p) &&
    p.includes('application/problem+json') &&
    p.at(-2) === 'enum' &&
    p.at(-3) === 'code' &&
    p.at(-4) === 'properties'
  );
};

// `components` is left out: a client meets a shared schema, parameter or answer where an operation uses it, and
// api-smart-diff reports the change there too (under `paths`, once per operation). Outside any operation it would
// judge a component with no context (it calls a new description of a shared answer breaking).
export function breakingChanges(before: unknown, after: unknown): Diff[] {
  return classify(before, after).breaking;
}

function classify(before: unknown, after: unknown): { breaking: Diff[]; widened: Diff[] } {
  const { diffs } = apiCompare(before, after);
  const inOperations = diffs.filter((diff) => diff.path[0] !== 'components');
  return {
    breaking: inOperations.filter(
      (diff) => !isNewAnswerEnumValue(diff) && (diff.type === 'breaking' || isRemovedAnswerProperty(diff) || isRetypedAnswerField(diff)),
    ),
    widened: inOperations.filter((diff) => isNewAnswerEnumValue(diff) && !isNewProblemCode(diff)),
  };
}

const compareVersions = (a: number[], b: number[]) => a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!;

export function judgeContract(before: OpenApiDocument, after: OpenApiDocument): ContractVerdict {
  const problems: string[] = [];
  const parse = (which: string, version: string) => {
    const m = SEMVER.exec(version);
    if (!m) problems.push(`info.version of the ${which} document is "${version}", not MAJOR.MINOR.PATCH`);
    return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
  };
  const was = parse('released', before.info.version);
  const now = parse('current', after.info.version);
  if (was && now && compareVersions(now, was) < 0)
    problems.push(`info.version goes back from ${before.info.version} to ${after.info.version}`);
  const newMajor = Boolean(was && now && now[0]! > was[0]!);
  const { breaking, widened } = classify(before, after);
  return {
    before: before.info.version,
    after: after.info.version,
    breaking,
    widened,
    newMajor,
    problems,
    ok: problems.length === 0 && (breaking.length === 0 || newMajor),
  };
}

/** One line per breaking change: where (the JSON path in the document) and what. */
export const describeChange = (diff: Diff) =>
  `${diff.action} ${diff.path.map((key) => String(key).replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}` +
  (diff.description ? `: ${diff.description}` : '');
