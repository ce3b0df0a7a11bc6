/**
 * scripts/gpu-host.sh's command line (issue 26, C8: the `--notebooks` mode): every wrong argument
 * is refused with exit status 2 and a line saying what is wrong, before anything runs (no Node is
 * unpacked, no step starts). The mode itself runs notebooks for minutes; it was checked end to end
 * from a bundle (docs/gpu.md), not here.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../scripts/gpu-host.sh', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'gpu-host-args-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function run(args: string[]) {
  const out = join(tmp, 'out');
  const r = spawnSync('bash', [SCRIPT, ...args.map((a) => a.replace('<out>', out))], { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stderr: r.stderr, ranSomething: existsSync(join(out, 'summary.txt')) };
}

test('gpu-host.sh refuses wrong arguments with exit 2 and a reason, before any step', () => {
  const cases: { args: string[]; says: RegExp }[] = [
    { args: [], says: /^usage: bash gpu-host\.sh <outdir> .*\n.*--notebooks \[names\.\.\.\] \[--preset paper\|rehearsal\|smoke\]/ },
    { args: ['--notebooks'], says: /^usage: / },
    { args: ['<out>', '--hf-cache', tmp], says: /--hf-cache, --data, --model, --llm-model, --shared and --timeout-per-cell go with --notebooks/ },
    { args: ['<out>', '--notebooks', '00', '--preset'], says: /gpu-host\.sh: --preset needs a value/ },
    { args: ['<out>', '--notebooks', '00', '--preset', '--hf-cache', tmp], says: /gpu-host\.sh: --preset needs a value/ },
    { args: ['<out>', '--notebooks', '00', '--hf-cache', join(tmp, 'missing')], says: /gpu-host\.sh: --hf-cache .*missing is not a directory/ },
    { args: ['<out>', '--notebooks', '00', '--data', join(tmp, 'missing')], says: /gpu-host\.sh: --data .*missing is not a directory/ },
    { args: ['<out>', '--bogus'], says: /gpu-host\.sh: unknown option --bogus/ },
  ];
  for (const c of cases) {
    const r = run(c.args);
    assert.equal(r.status, 2, `${c.args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, c.says, c.args.join(' '));
    assert.equal(r.ranSomething, false, `${c.args.join(' ')} started a step`);
  }
});
