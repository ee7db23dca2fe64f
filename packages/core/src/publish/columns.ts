/**
 * What a column of a published corpus means when its table does not say. Each table declares its columns'
 * meanings with the columns themselves (corpus's table declarations); the columns named by a prefix
 * (embeddings, post-hoc judges' tags) are documented here, and a column no one documents is still listed,
 * with its type, and said to be undocumented rather than silently left out.
 */
export function columnMeaning(name: string): string {
  if (name.startsWith('emb_')) return `embedding of the answer by encoder ${name.slice(4)} (FLOAT list of dim values; unit vector)`;
  if (name.startsWith('tag_')) return `tag of the post-hoc judge ${name.slice(4)}: correct, hallucinated, not_known or judge_failure`;
  return 'undocumented column (see docs/DESIGN.md#event-rows in the Panta repository)';
}
