import { describe, expect, it } from 'vitest';
import { deviceFromWidth } from '../../lambdas/domain/device.js';
import type { Device } from '../../lambdas/domain/tracked-event.js';

describe('deviceFromWidth: the device class from the screen width `w`', () => {
  it.each<[number | null | undefined, Device]>([
    [0, 'Mobile'],
    [320, 'Mobile'],
    [767, 'Mobile'],
    [767.5, 'Mobile'],
    [768, 'Tablet'],
    [1023, 'Tablet'],
    [1024, 'Desktop'],
    [1920, 'Desktop'],
    [7680, 'Desktop'],
    [null, 'Unknown'],
    [undefined, 'Unknown'],
    [-1, 'Unknown'],
    [Number.NaN, 'Unknown'],
    [Number.POSITIVE_INFINITY, 'Unknown'],
  ])('width %s → %s', (width, device) => {
    expect(deviceFromWidth(width)).toBe(device);
  });
});
