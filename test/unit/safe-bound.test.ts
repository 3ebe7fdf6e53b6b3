// The change stream's safe bound (src/modules/events/safe-bound.ts), as a table of readings of the database's
// watermark: an id becomes safe only when every transaction that could hold it has ended.
import { describe, expect, it } from 'vitest';
import { SafeBound } from '../../src/modules/events/safe-bound.ts';

const reading = (xmin: number, xmax: number, last: number) => ({ xmin: BigInt(xmin), xmax: BigInt(xmax), last });

describe('SafeBound', () => {
  it('has no bound before a second reading, and with nothing running takes the first reading\'s last id', () => {
    const bound = new SafeBound();
    expect(bound.observe(reading(100, 100, 7))).toBe(false);
    expect(bound.value).toBeUndefined();
    expect(bound.observe(reading(100, 100, 7))).toBe(true);
    expect(bound.value).toBe(7);
    expect(bound.pending).toBe(false);
  });

  it('waits while a transaction that was running at the next reading still runs', () => {
    const bound = new SafeBound();
    bound.observe(reading(100, 100, 5));
    bound.observe(reading(100, 100, 5));
    expect(bound.value).toBe(5);
    // ids 6..9 handed out; transaction 100 (which may hold one of them) runs on
    bound.observe(reading(100, 104, 9));
    bound.observe(reading(100, 105, 9));
    expect(bound.value).toBe(5);
    expect(bound.pending).toBe(true);
    // 100 ended, but 101..103 (begun before the reading after the one that saw 9) may still run: 103 does
    bound.observe(reading(103, 106, 9));
    expect(bound.value).toBe(5);
    // every transaction below 105 (the xmax of the reading after the one that saw 9) has ended
    expect(bound.observe(reading(105, 106, 9))).toBe(true);
    expect(bound.value).toBe(9);
  });

  it('moves to the newest candidate whose transactions have all ended, never backwards', () => {
    const bound = new SafeBound();
    bound.observe(reading(10, 10, 1));
    bound.observe(reading(10, 12, 3)); // 10 and 11 run: they may hold id 1
    expect(bound.value).toBeUndefined();
    bound.observe(reading(12, 14, 3)); // they ended: 1 is safe; 3 waits for 12 and 13
    expect(bound.value).toBe(1);
    bound.observe(reading(12, 15, 6));
    expect(bound.value).toBe(1);
    bound.observe(reading(20, 20, 6)); // everything ended: 3 and 6 both safe
    expect(bound.value).toBe(6);
    bound.observe(reading(20, 20, 6));
    expect(bound.value).toBe(6);
    expect(bound.pending).toBe(false);
    expect(bound.seen).toBe(6);
  });
});
