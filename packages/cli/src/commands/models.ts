import { resolve } from 'node:path';
import { OnnxEncoder } from '@panta/embed';
import { EXIT, reportError } from '../errors.js';

/** The four encoders of the Rheon paper: each Hugging Face repo ships onnx/model.onnx. */
export const PAPER_ENCODERS = [
  { repo: 'sentence-transformers/all-MiniLM-L6-v2', dim: 384, note: "the paper's main encoder" },
  { repo: 'sentence-transformers/all-MiniLM-L12-v2', dim: 384, note: 'robustness check' },
  { repo: 'sentence-transformers/all-mpnet-base-v2', dim: 768, note: 'robustness check' },
  { repo: 'sentence-transformers/paraphrase-mpnet-base-v2', dim: 768, note: 'robustness check' },
] as const;

/** `panta models`: where to get the paper's encoders and how to point a spec at them. */
export function modelsCommand(): number {
  const out: string[] = [];
  out.push('Panta runs sentence-transformers ONNX exports from local folders (it never downloads models itself).');
  out.push('');
  out.push('The four encoders of the Rheon paper (their Hugging Face repositories ship onnx/model.onnx):');
  for (const m of PAPER_ENCODERS) out.push(`  ${m.repo.padEnd(48)} dim ${m.dim}  ${m.note}`);
  out.push('');
  out.push('Download one (pip install -U huggingface_hub):');
  out.push(
    "  huggingface-cli download sentence-transformers/all-MiniLM-L6-v2 --include 'onnx/model.onnx' tokenizer.json tokenizer_config.json config.json --local-dir models/all-MiniLM-L6-v2",
  );
  out.push('Export any other sentence-transformers model (pip install optimum[exporters]):');
  out.push('  optimum-cli export onnx --model REPO models/NAME');
  out.push('A folder holds model.onnx or onnx/model.onnx, tokenizer.json, tokenizer_config.json and optionally config.json;');
  out.push('the model takes int64 input_ids, attention_mask (and token_type_ids) and outputs float32 last_hidden_state [batch, seq, dim].');
  out.push('');
  out.push('Check a folder:  panta models check models/all-MiniLM-L6-v2');
  out.push('');
  out.push('Point a sweep spec at it (path relative to the spec file; one emb_<name> column per encoder):');
  out.push('  encoders:');
  out.push('    - { name: hashing, kind: hashing }');
  out.push('    - name: minilm');
  out.push('      kind: onnx');
  out.push('      path: models/all-MiniLM-L6-v2');
  out.push('      max_batch: 32        # texts per session run (micro-batched across concurrent events)');
  out.push('      # max_wait_ms: 2     # how long a batch waits for more texts');
  out.push('      # threads: 4         # onnxruntime intra-op threads');
  out.push('      # device: cuda       # needs the GPU build of onnxruntime-node; default cpu');
  process.stdout.write(`${out.join('\n')}\n`);
  return EXIT.ok;
}

export interface ModelsCheckOptions {
  threads?: number;
  device?: 'cpu' | 'cuda';
}

/**
 * `panta models check DIR`: files present, inputs and outputs as expected, tokenizer loads, one sentence
 * embeds to a unit vector. Prints what it found and returns 0, or one line and 2.
 */
export async function modelsCheckCommand(dir: string, options: ModelsCheckOptions = {}): Promise<number> {
  let enc: OnnxEncoder | undefined;
  try {
    enc = await OnnxEncoder.fromOptions({
      name: 'check',
      path: resolve(dir),
      device: options.device ?? 'cpu',
      ...(options.threads !== undefined ? { threads: options.threads } : {}),
    });
    const info = enc.info;
    const sentence = 'The quick brown fox jumps over the lazy dog.';
    const start = performance.now();
    const [row] = await enc.encode([sentence]);
    const ms = performance.now() - start;
    const norm = Math.sqrt(row!.reduce((s, x) => s + x * x, 0));
    if (row!.length !== enc.dim || !Number.isFinite(norm) || Math.abs(norm - 1) > 1e-3) {
      process.stderr.write(
        `panta: ${dir}: embedding a sentence gave a vector of length ${row!.length} and norm ${norm}, expected ${enc.dim} and 1; fix: re-export the model\n`,
      );
      return EXIT.badInput;
    }
    const fmt = (m: (typeof info.inputs)[number]): string => `${m.name} ${m.type ?? '?'} [${(m.shape ?? []).join(', ')}]`;
    process.stdout.write(
      `${[
        `ok: ${dir}`,
        `  model:      ${enc.model}`,
        `  inputs:     ${info.inputs.map(fmt).join('; ')}`,
        `  outputs:    ${info.outputs.map(fmt).join('; ')}`,
        `  dim:        ${enc.dim}`,
        `  max length: ${info.maxLength} tokens (pad id ${info.padId})`,
        `  embedded one sentence in ${ms.toFixed(1)} ms, norm ${norm.toFixed(6)}`,
      ].join('\n')}\n`,
    );
    return EXIT.ok;
  } catch (error) {
    return reportError(error);
  } finally {
    await enc?.close();
  }
}
