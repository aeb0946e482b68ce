// Pure parts of the runtimes: which paths the run socket lets through, how tool paths appear inside a
// sandbox, the bwrap command line, and the runtime `auto` picks.
import { describe, expect, it } from 'vitest';
import { isOwnSessionPath } from '../../src-main/gateway/run-socket.js';
import { bwrapArgs, limitArgs, systemArgs } from '../../src-main/rollouts/runtimes/bwrap/args.js';
import { resolveRuntime } from '../../src-main/rollouts/runtimes/index.js';
import { toolMounts } from '../../src-main/rollouts/runtimes/layout.js';
import { DEFAULT_LIMITS } from '../../src-main/rollouts/runtimes/types.js';

const KEY = 'a'.repeat(32);

describe('run socket paths', () => {
  it('lets through only the run\'s own session routes', () => {
    expect(isOwnSessionPath(`/s/${KEY}`, KEY)).toBe(true);
    expect(isOwnSessionPath(`/s/${KEY}/v1/chat/completions?x=1`, KEY)).toBe(true);
    expect(isOwnSessionPath(`/s/${'b'.repeat(32)}/v1/chat/completions`, KEY)).toBe(false);
    expect(isOwnSessionPath(`/s/${KEY}x/v1/models`, KEY)).toBe(false);
    expect(isOwnSessionPath('/api/engines/pause', KEY)).toBe(false);
    expect(isOwnSessionPath('/v1/chat/completions', KEY)).toBe(false);
    for (const trick of ['/../../api/sessions', '/%2e%2e/api', '/..%2fapi', '/x/%2E%2E/y', '/.\\\\api', '/./v1']) {
      expect(isOwnSessionPath(`/s/${KEY}${trick}`, KEY), trick).toBe(false);
    }
  });
});

describe('tool mounts', () => {
  it('maps host tool paths (and arguments starting with one) under /run/rollgate/tools, longest match first', () => {
    const m = toolMounts(['/opt/node/bin', '/data/agents/claude-1', '/data/agents/claude-1/node_modules/.bin', '/opt/node/bin']);
    expect(m.mounts).toEqual([
      { host: '/opt/node/bin', sandbox: '/run/rollgate/tools/0/bin' },
      { host: '/data/agents/claude-1', sandbox: '/run/rollgate/tools/1/claude-1' },
      { host: '/data/agents/claude-1/node_modules/.bin', sandbox: '/run/rollgate/tools/2/.bin' },
    ]);
    expect(m.map('/opt/node/bin/node')).toBe('/run/rollgate/tools/0/bin/node');
    expect(m.map('/data/agents/claude-1/node_modules/.bin/claude')).toBe('/run/rollgate/tools/2/.bin/claude');
    expect(m.map('/opt/node/binary')).toBe('/opt/node/binary');
    expect(m.map('-p')).toBe('-p');
  });
});

describe('bwrap command line', () => {
  it('shares no namespace, drops capabilities, dies with its parent, and applies limits before the command', () => {
    const args = bwrapArgs({ mounts: [{ host: '/h/work', sandbox: '/work', mode: 'rw' }, { host: '/h/tool', sandbox: '/run/rollgate/tools/0/tool', mode: 'ro' }], cwd: '/work', limits: DEFAULT_LIMITS, command: ['node', 'x.js'], system: ['--ro-bind', '/usr', '/usr'] });
    expect(args.slice(0, 6)).toEqual(['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--ro-bind']);
    expect(args.join(' ')).toContain('--bind /h/work /work --ro-bind /h/tool /run/rollgate/tools/0/tool --remount-ro / --chdir /work -- prlimit');
    expect(args.slice(-2)).toEqual(['node', 'x.js']);
    expect(limitArgs({ memoryMb: 1, processes: 2, fileSizeMb: 3, cpuSeconds: 4 })).toEqual(['prlimit', '--nproc=2', `--data=${1 << 20}`, `--fsize=${3 << 20}`, '--cpu=4', '--core=0', '--']);
  });

  it('mounts the merged-/usr links as links, only the listed /etc files, and nothing of /home, /root, /tmp or /var', () => {
    const links = new Map([['/bin', 'usr/bin'], ['/lib', 'usr/lib'], ['/etc/localtime', '/usr/share/zoneinfo/Etc/UTC']]);
    const present = ['/usr', '/etc', '/bin', '/lib', '/home', '/etc/passwd', '/etc/shadow', '/etc/ssh', '/etc/ssl/private', '/etc/localtime'];
    const args = systemArgs((p) => present.includes(String(p)), ((p: string) => ({ isSymbolicLink: () => links.has(p) })) as never, ((p: string) => links.get(p)) as never);
    expect(args).toEqual(['--ro-bind', '/usr', '/usr', '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/lib', '/lib',
      '--ro-bind', '/etc/passwd', '/etc/passwd', '--symlink', '/usr/share/zoneinfo/Etc/UTC', '/etc/localtime']);
  });
});

describe('runtime choice', () => {
  it('auto is bwrap where bwrap works here, else local with a warning; local always warns', () => {
    const auto = resolveRuntime('auto');
    if ('error' in auto) throw new Error(auto.error);
    if (auto.runtime.name === 'local') expect(auto.warning).toMatch(/UNSANDBOXED/);
    else expect(auto).toMatchObject({ runtime: { name: 'bwrap' }, warning: null });
    const local = resolveRuntime('local');
    expect('error' in local ? null : local.warning).toMatch(/UNSANDBOXED/);
  });
});
