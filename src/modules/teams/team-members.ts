import type { User as UserBody } from '../../../generated/client/types.gen.ts';
import type { TeamRole } from './team.entity.ts';

/** A team's members as presented, managers and members each in the order they joined, and everyone's role. */
export type TeamMembers = { roles: ReadonlyMap<number, TeamRole>; managers: readonly UserBody[]; members: readonly UserBody[] };
