/**
 * What the dataset card says of a column its table does not document. Each table declares its columns'
 * meanings with the columns themselves (corpus's table declarations, embeddings and post-hoc tags
 * included); a column no one documents is still listed, with its type, and said to be undocumented rather
 * than silently left out.
 */
export const UNDOCUMENTED_COLUMN = 'undocumented column (see docs/DESIGN.md#event-rows in the Panta repository)';
