import { describe, expect, it, vi } from 'vitest';
import { EventBus } from '../../src-main/api/events.js';

describe('EventBus', () => {
  it('keeps delivering to other listeners, and never throws to the emitter, when a listener fails', () => {
    const bus = new EventBus();
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const seen: string[] = [];
    bus.subscribe(() => { throw new Error('broken UI client'); });
    const off = bus.subscribe((ev) => seen.push(ev.type));
    expect(() => bus.emit({ type: 'session', id: 's1' })).not.toThrow();
    off();
    bus.emit({ type: 'session', id: 's2' });
    expect(seen).toEqual(['session']);
    expect(quiet).toHaveBeenCalledTimes(2);
    quiet.mockRestore();
  });
});
