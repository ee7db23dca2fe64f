import { statSync } from 'node:fs';
import { checkPublished, publishCorpus } from '@panta/corpus';
import { InputError } from '@panta/core';
import { EXIT, reportError } from '../errors.js';

export interface PublishCommandOptions {
  out?: string;
  licence?: string;
  title?: string;
  authors?: string;
  withoutEmbeddings?: boolean;
  judge?: string;
  check?: boolean;
}

/** `panta publish CORPUS --out DIR`, or `panta publish --check DIR`. */
export async function publishCommand(dir: string, opts: PublishCommandOptions): Promise<number> {
  try {
    if (opts.check) {
      // A path that is no folder is bad input (one line, exit 2), not a list of what the folder lacks.
      const kind = (() => {
        try {
          return statSync(dir).isDirectory() ? 'folder' : 'file';
        } catch {
          return 'missing';
        }
      })();
      if (kind !== 'folder')
        throw new InputError(
          dir,
          '--check',
          kind === 'missing' ? 'does not exist' : 'is a file, not a folder',
          'give the folder panta publish --out wrote',
        );
      const problems = await checkPublished(dir);
      for (const p of problems) process.stdout.write(`problem: ${p}\n`);
      process.stdout.write(
        problems.length === 0 ? `ok: ${dir} is a complete publication\n` : `not ok: ${problems.length} problems in ${dir}\n`,
      );
      return problems.length === 0 ? EXIT.ok : EXIT.failed;
    }
    if (!opts.out) throw new InputError('panta publish', '--out', 'is required', 'give the folder to publish into: --out DIR');
    const authors = opts.authors
      ?.split(',')
      .map((a) => a.trim())
      .filter((a) => a !== '');
    const { tables } = await publishCorpus(dir, { ...opts, out: opts.out, authors });
    for (const t of tables) process.stdout.write(`${t.name}: ${t.rows} rows in ${t.files.length} file(s)\n`);
    process.stdout.write(`published: ${opts.out} (README.md, croissant.json, data/)\n`);
    return EXIT.ok;
  } catch (error) {
    return reportError(error);
  }
}
