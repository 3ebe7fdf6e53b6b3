// The gate large answers wait at (src/http/answer-gate.ts): at most `slots` are built at once, a slot is held until
// its answer's response closes and then passes to the next in line, small answers never wait, and a request that
// builds several answers (a web view) holds one slot only.
import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { describe, expect, it } from 'vitest';
import { AnswerGate, LARGE_ANSWER_BYTES } from '../../src/http/answer-gate.ts';

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
  it('builds at most `slots` large answers at once; the next waits until one closes', async () => {
    const gate = new AnswerGate(2);
    const [a, b, c, d] = [response(), response(), response(), response()];
    await gate.admit(a, LARGE_ANSWER_BYTES);
    await gate.admit(b, 4 * LARGE_ANSWER_BYTES);
    const third = gate.admit(c, LARGE_ANSWER_BYTES);
    const fourth = gate.admit(d, LARGE_ANSWER_BYTES);
    expect(await settled(third)).toBe(false);
    expect(gate.state()).toEqual({ busy: 2, waiting: 2 });
    a.emit('close');
    expect(await settled(third)).toBe(true);
    expect(await settled(fourth)).toBe(false);
    b.emit('close');
    b.emit('close'); // closing twice releases once
    expect(await settled(fourth)).toBe(true);
    expect(gate.state()).toEqual({ busy: 2, waiting: 0 });
    c.emit('close');
    d.emit('close');
    expect(gate.state()).toEqual({ busy: 0, waiting: 0 });
  });

  it('lets small answers through however many large ones are being built', async () => {
    const gate = new AnswerGate(1);
    await gate.admit(response(), LARGE_ANSWER_BYTES);
    expect(await settled(gate.admit(response(), LARGE_ANSWER_BYTES - 1))).toBe(true);
    expect(await settled(gate.admit(response(), LARGE_ANSWER_BYTES))).toBe(false);
  });

  it('gives a request that builds several large answers one slot, so two such requests never wait for each other', async () => {
    const gate = new AnswerGate(1);
    const view = response();
    await gate.admit(view, LARGE_ANSWER_BYTES);
    expect(await settled(gate.admit(view, LARGE_ANSWER_BYTES))).toBe(true);
    expect(gate.state()).toEqual({ busy: 1, waiting: 0 });
    view.emit('close');
    expect(gate.state()).toEqual({ busy: 0, waiting: 0 });
  });

  it('frees the slot at once when the client went away before the answer was admitted', async () => {
    const gate = new AnswerGate(1);
    const gone = response();
    Object.assign(gone, { destroyed: true });
    await gate.admit(gone, LARGE_ANSWER_BYTES);
    expect(gate.state()).toEqual({ busy: 0, waiting: 0 });
  });
});
