import { runCli } from '../src/index.js';

/** What `panta ARGS` did: its exit code and what it wrote to stdout and stderr. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `panta ARGS` in this process: the same code as the binary, without a Node start and a bundle load per call
 * (about a second of CPU each). `env` is set in process.env for the call and restored after it. The tests keep
 * the binary (test/helpers.ts's panta) where the process itself is checked: signals, exit status, stdout.
 */
export async function cli(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  const saved = Object.keys(env).map((k) => [k, process.env[k]] as const);
  Object.assign(process.env, env);
  let stdout = '';
  let stderr = '';
  try {
    const code = await runCli(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
    return { code, stdout, stderr };
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
