/**
 * Renews a role's lease if this process still holds it (ARGV[2] = 'release' deletes it instead).
 * KEYS: lease key; ARGV: token, 'renew' | 'release', ttl ms
 * Returns 1 done, 0 another process holds the lease (or none does).
 */
export const LEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == 'release' then redis.call('DEL', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
`;
