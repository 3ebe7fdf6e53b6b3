// The gate answers of much text wait at (src/http/answer-gate.ts): the text being built at once stays within the
// budget, each answer's share is held until its response closes and then goes to those next in line (first come,
// first served), an answer larger than the budget is built alone, small answers never wait, and a request that
// builds several answers (a web view) is admitted once.
import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { describe, expect, it } from 'vitest';
import { AnswerGate, WAIT_FROM_BYTES } from '../../src/http/answer-gate.ts';

function response(): Response & EventEmitter {
  const res = new EventEmitter() as unknown as Response & EventEmitter;
  Object.assign(res, { req: {}, closed: false, destroyed: false });
  return res;
}

const settled = async (promise: Promise<void>) => {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe('AnswerGate', () => {
  const MiB = 1024 * 1024;

  it('builds answers within the budget of text; the next waits until enough of it is free', async () => {
    const gate = new AnswerGate(4 * MiB);
    const [a, b, c, d] = [response(), response(), response(), response()];
    await gate.admit(a, 2 * MiB);
    await gate.admit(b, MiB);
    const third = gate.admit(c, 2 * MiB);
    const fourth = gate.admit(d, WAIT_FROM_BYTES); // would fit, but never passes one that waits
    expect(await settled(third)).toBe(false);
    expect(await settled(fourth)).toBe(false);
    expect(gate.state()).toEqual({ busy: 2, bytes: 3 * MiB, waiting: 2 });
    b.emit('close');
    b.emit('close'); // closing twice releases once
    // 2 MiB in flight: the third (2 MiB) fits, then the fourth does not
    expect(await settled(third)).toBe(true);
    expect(await settled(fourth)).toBe(false);
    expect(gate.state()).toEqual({ busy: 2, bytes: 4 * MiB, waiting: 1 });
    a.emit('close');
    expect(await settled(fourth)).toBe(true);
    expect(gate.state()).toEqual({ busy: 2, bytes: 2 * MiB + WAIT_FROM_BYTES, waiting: 0 });
    c.emit('close');
    d.emit('close');
    expect(gate.state()).toEqual({ busy: 0, bytes: 0, waiting: 0 });
  });

  it('builds an answer larger than the whole budget alone', async () => {
    const gate = new AnswerGate(4 * MiB);
    const [a, huge, after] = [response(), response(), response()];
    await gate.admit(a, WAIT_FROM_BYTES);
    const alone = gate.admit(huge, 10 * MiB);
    expect(await settled(alone)).toBe(false);
    a.emit('close');
    expect(await settled(alone)).toBe(true);
    expect(gate.state()).toEqual({ busy: 1, bytes: 4 * MiB, waiting: 0 });
    const next = gate.admit(after, WAIT_FROM_BYTES);
    expect(await settled(next)).toBe(false);
    huge.emit('close');
    expect(await settled(next)).toBe(true);
  });

  it('lets small answers through however much text is being built', async () => {
    const gate = new AnswerGate(MiB);
    await gate.admit(response(), MiB);
    expect(await settled(gate.admit(response(), WAIT_FROM_BYTES - 1))).toBe(true);
    expect(await settled(gate.admit(response(), WAIT_FROM_BYTES))).toBe(false);
  });

  it('admits a request that builds several large answers once, so two such requests never wait for each other', async () => {
    const gate = new AnswerGate(MiB);
    const view = response();
    await gate.admit(view, MiB);
    expect(await settled(gate.admit(view, MiB))).toBe(true);
    expect(gate.state()).toEqual({ busy: 1, bytes: MiB, waiting: 0 });
    view.emit('close');
    expect(gate.state()).toEqual({ busy: 0, bytes: 0, waiting: 0 });
  });

  it('frees the share at once when the client went away before the answer was admitted', async () => {
    const gate = new AnswerGate(MiB);
    const gone = response();
    Object.assign(gone, { destroyed: true });
    await gate.admit(gone, MiB);
    expect(gate.state()).toEqual({ busy: 0, bytes: 0, waiting: 0 });
  });
});
