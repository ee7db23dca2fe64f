import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The rule that keeps Redis access typed: only the Redis layer (src/redis.ts, src/redis/, the Lua texts in
 * src/scripts/) issues Redis commands; role files call its functions. Checked on types, not text: a call
 * counts when the method called is declared by ioredis (so `runs.get(...)` on a Map does not, and a
 * connection renamed or passed around still does). Connection lifecycle calls are allowed everywhere.
 */
const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), '..');
const LAYER = [/^src\/redis\.ts$/, /^src\/redis\//, /^src\/scripts\//];
const LIFECYCLE = new Set(['duplicate', 'quit', 'disconnect', 'connect', 'on', 'once', 'off']);

interface Call {
  file: string;
  line: number;
  method: string;
}

/** Every call of an ioredis method (lifecycle ones aside) in the package's sources. */
function redisCalls(): Call[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(PACKAGE, 'tsconfig.json'),
    { noEmit: true },
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(String(d.messageText));
      },
    },
  )!;
  const program = ts.createProgram({ rootNames: config.fileNames, options: { ...config.options, noEmit: true } });
  const checker = program.getTypeChecker();
  const fromIoredis = (symbol: ts.Symbol | undefined): boolean => {
    const s = symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    return (s?.getDeclarations() ?? []).some((d) => /[\\/]node_modules[\\/]ioredis[\\/]/.test(d.getSourceFile().fileName));
  };
  const calls: Call[] = [];
  for (const source of program.getSourceFiles()) {
    const file = relative(PACKAGE, source.fileName).split('\\').join('/');
    if (!file.startsWith('src/')) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
        const method = node.expression.name.text;
        if (!LIFECYCLE.has(method) && fromIoredis(checker.getSymbolAtLocation(node.expression.name))) {
          calls.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, method });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return calls;
}

describe('the typed Redis layer', () => {
  let calls: Call[];
  beforeAll(() => {
    calls = redisCalls();
  }, 60_000);

  it('is the only code that issues Redis commands: role files call its typed functions', () => {
    const outside = calls.filter((c) => !LAYER.some((re) => re.test(c.file))).map((c) => `${c.file}:${c.line} ${c.method}()`);
    expect(outside, 'move these into a typed function under src/redis/').toEqual([]);
  });

  it('the check sees commands where they are issued (else it would pass on anything)', () => {
    const seen = new Set(calls.map((c) => `${c.file} ${c.method}`));
    for (const expected of [
      'src/redis/sweep-store.ts hget',
      'src/redis/sweep-store.ts multi',
      'src/redis/inboxes.ts xadd',
      'src/redis/inbox-reader.ts xread',
      'src/redis/scripts.ts defineCommand',
      'src/redis.ts ping',
    ]) {
      expect(seen, expected).toContain(expected);
    }
  });
});
