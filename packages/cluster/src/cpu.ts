/** This process's CPU time so far (user + system), in ms: the roles log it when they end, for capacity planning. */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return Math.round((user + system) / 1000);
}
