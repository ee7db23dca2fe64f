import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { ROOT } from './helpers.js';

type Obj = Record<string, any>;

/** kubernetes-models' interface of each kind the deploy files use: its module and its name. */
const INTERFACES: Record<string, [module: string, name: string]> = {
  'v1/Namespace': ['kubernetes-models/v1/Namespace', 'INamespace'],
  'v1/Service': ['kubernetes-models/v1/Service', 'IService'],
  'v1/ConfigMap': ['kubernetes-models/v1/ConfigMap', 'IConfigMap'],
  'v1/Secret': ['kubernetes-models/v1/Secret', 'ISecret'],
  'v1/PersistentVolumeClaim': ['kubernetes-models/v1/PersistentVolumeClaim', 'IPersistentVolumeClaim'],
  'apps/v1/Deployment': ['kubernetes-models/apps/v1/Deployment', 'IDeployment'],
  'apps/v1/StatefulSet': ['kubernetes-models/apps/v1/StatefulSet', 'IStatefulSet'],
  'batch/v1/Job': ['kubernetes-models/batch/v1/Job', 'IJob'],
};

/**
 * Fields the Kubernetes API does not know, anywhere in each object: kubernetes-models' validators (compiled from
 * the API's OpenAPI schema) accept unknown fields, as the API server's non-strict decoding does, so a misspelt
 * probe field would pass them and be dropped by the cluster without a word. Its TypeScript interfaces come from
 * the same schema; an object literal typed by them is held to the known fields at every depth (TypeScript's
 * excess property check). One line per problem, naming the object and the field.
 */
export function unknownK8sFields(docs: readonly Obj[]): string[] {
  const lines: string[] = [];
  const imports = new Set<string>();
  for (const doc of docs) {
    const entry = INTERFACES[`${doc.apiVersion}/${doc.kind}`];
    if (!entry) throw new Error(`no kubernetes-models interface for ${doc.apiVersion} ${doc.kind}`);
    imports.add(`import type { ${entry[1]} } from '${entry[0]}';`);
    lines.push(`export const o${lines.length}: ${entry[1]} = ${JSON.stringify(doc)};`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'panta-k8s-'));
  try {
    const file = join(dir, 'objects.ts');
    const head = [...imports];
    writeFileSync(file, [...head, ...lines].join('\n'));
    const program = ts.createProgram([file], {
      noEmit: true,
      strict: true,
      skipLibCheck: true,
      types: [],
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      paths: { 'kubernetes-models/*': [join(ROOT, 'node_modules', 'kubernetes-models', '*')] },
    });
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line - head.length : -1;
      const doc = docs[line];
      const where = doc ? `${doc.kind}/${doc.metadata?.name}` : 'objects.ts';
      return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ').split('  ')[0]}`;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
