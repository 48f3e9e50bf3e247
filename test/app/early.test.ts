import { describe, expect, it } from 'vitest';
import { startEarly, takeEarly } from '../../app/src/early.js';

describe('requests started before the page mounts (app/src/early.ts)', () => {
  it("hands the early answer to the page's first load only; a later load asks again", async () => {
    let asked = 0;
    const load = async () => ++asked;
    startEarly('k1', load);
    expect(asked).toBe(1);
    expect(await takeEarly('k1', load)).toBe(1);
    expect(await takeEarly('k1', load)).toBe(2);
    // Another key was never started early: the page asks itself.
    expect(await takeEarly('k2', load)).toBe(3);
  });

  it('asks again when the early request failed (it ran before the user signed in)', async () => {
    startEarly('k3', () => Promise.reject(new Error('401')));
    // The early failure is not left unhandled while nobody takes it.
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await takeEarly('k3', async () => 'signed in')).toBe('signed in');
  });

  it("takes the session check's failure as its answer, without asking again", async () => {
    let asked = 0;
    startEarly('k4', () => Promise.reject(new Error('401')));
    await new Promise((resolve) => setTimeout(resolve, 10));
    await expect(takeEarly('k4', async () => ++asked, false)).rejects.toThrow('401');
    expect(asked).toBe(0);
  });
});
