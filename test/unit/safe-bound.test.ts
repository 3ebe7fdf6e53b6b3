// The change stream's safe bound (src/modules/events/safe-bound.ts), as a table of readings of the database: the
// last change id handed out and, read after it, the transactions running. An id becomes safe only when every
// transaction that could hold it has ended.
import { describe, expect, it } from 'vitest';
import { SafeBound } from '../../src/modules/events/safe-bound.ts';

const reading = (running: number[], last: number) => ({ running: new Set(running.map(String)), last });

describe('SafeBound', () => {
  it('with nothing running, takes a reading\'s last id at once', () => {
    const bound = new SafeBound();
    expect(bound.observe(reading([], 7))).toBe(true);
    expect(bound.value).toBe(7);
    expect(bound.pending).toBe(false);
    expect(bound.observe(reading([], 7))).toBe(false);
  });

  it('has no bound while the transactions running at the first reading still run', () => {
    const bound = new SafeBound();
    expect(bound.observe(reading([40], 7))).toBe(false);
    expect(bound.value).toBeUndefined();
    expect(bound.pending).toBe(true);
    // 40 still runs (41 began since: it can hold only ids after 7)
    expect(bound.observe(reading([40, 41], 7))).toBe(false);
    expect(bound.value).toBeUndefined();
    expect(bound.observe(reading([41], 7))).toBe(true);
    expect(bound.value).toBe(7);
  });

  it('waits while a transaction running at the reading that saw an id still runs, whatever its transaction id', () => {
    const bound = new SafeBound();
    bound.observe(reading([], 5));
    expect(bound.value).toBe(5);
    // ids 6..9 handed out; 100 and 300 run (300 newer than any that ended: a snapshot's xmin would leave it out)
    bound.observe(reading([100, 300], 9));
    expect(bound.value).toBe(5);
    expect(bound.pending).toBe(true);
    bound.observe(reading([300, 301], 9));
    expect(bound.value).toBe(5);
    // both ended: every id up to 9 has committed or never will (301 began after 9 was handed out)
    expect(bound.observe(reading([301], 9))).toBe(true);
    expect(bound.value).toBe(9);
  });

  it('moves to the newest candidate whose transactions have all ended, never backwards', () => {
    const bound = new SafeBound();
    bound.observe(reading([10, 11], 1)); // 10 and 11 run: they may hold id 1
    expect(bound.value).toBeUndefined();
    bound.observe(reading([12], 3)); // they ended: 1 is safe; 3 waits for 12
    expect(bound.value).toBe(1);
    bound.observe(reading([12, 13], 6));
    expect(bound.value).toBe(1);
    expect(bound.seen).toBe(6);
    bound.observe(reading([], 6)); // everything ended: 3 and 6 both safe
    expect(bound.value).toBe(6);
    bound.observe(reading([], 6));
    expect(bound.value).toBe(6);
    expect(bound.pending).toBe(false);
    expect(bound.seen).toBe(6);
  });
});
