/**
 * `npx panta worker &` runs the role under `sh -c` under npm: killing npm's process (its pid is the one the
 * shell printed) ends npm and the shell, never the role, which would serve on under PID 1. A role started
 * through npm (npm puts npm_command in its environment) therefore watches its parent process and stops
 * gracefully once that is gone. Started otherwise (a terminal, nohup, a container's PID 1, Slurm), a role keeps
 * running on its own when its parent ends.
 */
export function watchParent(
  onGone: (parent: number) => void,
  opts: { env?: NodeJS.ProcessEnv; ppid?: () => number; intervalMs?: number } = {},
): () => void {
  const env = opts.env ?? process.env;
  if (env.npm_command === undefined && env.npm_lifecycle_event === undefined) return () => undefined;
  const ppid = opts.ppid ?? (() => process.ppid);
  const parent = ppid();
  if (parent <= 1) return () => undefined;
  const timer = setInterval(() => {
    if (ppid() === parent) return;
    clearInterval(timer);
    onGone(parent);
  }, opts.intervalMs ?? 500);
  timer.unref();
  return () => clearInterval(timer);
}
