// What every flow of the soak is made with: the traffic its requests go through, the world it acts in (users, team,
// notes) and the deadline it stops at.
import type { Deadline, Traffic } from './traffic.ts';
import type { World } from './world.ts';

export class Flow {
  protected readonly traffic: Traffic;
  protected readonly world: World;
  protected readonly deadline: Deadline;

  constructor(traffic: Traffic, world: World, deadline: Deadline) {
    this.traffic = traffic;
    this.world = world;
    this.deadline = deadline;
  }
}
