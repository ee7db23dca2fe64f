/** What an OpenAI-compatible server accepts beyond the standard fields (see buildChatBody). */
export type ServerKind = 'vllm' | 'llamacpp' | 'ollama' | 'openai';

export interface ServerInfo {
  server: ServerKind;
  /** true when the kind came from the spec's `server` hint, false when probed (or the probe's fallback). */
  fromSpec: boolean;
  /** The context window the server reports for the model (vLLM max_model_len, llama.cpp n_ctx, Ollama context_length). */
  contextTokens?: number;
}

interface ModelEntry {
  id?: unknown;
  owned_by?: unknown;
  max_model_len?: unknown;
  context_length?: unknown;
  meta?: { n_ctx?: unknown; n_ctx_train?: unknown } | null;
}

/**
 * Reads a `GET /v1/models` body: `owned_by: "vllm"` is vLLM (SGLang's `"sglang"` and Panta's own surrogate
 * server's `"panta"` take the same extras, so they count as vLLM), `owned_by: "llamacpp"` or a `meta` block with `n_ctx_train` is llama.cpp, Ollama names the
 * model's namespace (`"library"` for its own models) in `owned_by` and tags ids as `name:tag`; anything else
 * is treated as OpenAI (standard fields only).
 */
export function serverFromModels(body: unknown, model?: string): Omit<ServerInfo, 'fromSpec'> {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data) || data.length === 0) return { server: 'openai' };
  const entries = data.filter((e): e is ModelEntry => typeof e === 'object' && e !== null);
  const entry = entries.find((e) => e.id === model) ?? entries[0];
  const owners = new Set(entries.map((e) => (typeof e.owned_by === 'string' ? e.owned_by.toLowerCase() : '')));
  let server: ServerKind = 'openai';
  if (owners.has('vllm') || owners.has('sglang') || owners.has('panta')) server = 'vllm';
  else if (owners.has('llamacpp') || entries.some((e) => e.meta && typeof e.meta === 'object' && 'n_ctx_train' in e.meta))
    server = 'llamacpp';
  else if (entries.some(isOllamaEntry)) server = 'ollama';
  const info: Omit<ServerInfo, 'fromSpec'> = { server };
  const ctx = entry ? firstPositiveInt(entry.max_model_len, entry.meta?.n_ctx, entry.context_length, entry.meta?.n_ctx_train) : undefined;
  if (ctx !== undefined) info.contextTokens = ctx;
  return info;
}

function isOllamaEntry(e: ModelEntry): boolean {
  if (typeof e.owned_by !== 'string' || typeof e.id !== 'string') return false;
  if (e.owned_by === 'library' || e.owned_by === 'ollama') return true;
  // Ollama's owned_by is the namespace of a `[host/]namespace/model:tag` name.
  return /:[\w.-]+$/.test(e.id) && e.owned_by !== '' && e.id.includes(`${e.owned_by}/`);
}

function firstPositiveInt(...values: unknown[]): number | undefined {
  for (const v of values) if (typeof v === 'number' && Number.isInteger(v) && v > 0) return v;
  return undefined;
}

/**
 * Asks one endpoint what it is with `GET {root}/models`. An answer that does not identify the server (a
 * non-2xx status, a body that is not JSON or not a model list) means `openai`: standard fields are accepted by
 * every server. No answer at all (refused, reset, timed out) resolves `undefined`: the server may still be
 * loading its model, so the caller asks again before the endpoint's next request rather than settle on the
 * fallback and send a vLLM server none of its sampling fields. Nothing is logged either way.
 */
export async function probeServer(root: string, apiKey: string, model: string, signal: AbortSignal): Promise<ServerInfo | undefined> {
  let res: Response;
  try {
    res = await fetch(`${root}/models`, { headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' }, signal });
  } catch {
    return undefined;
  }
  try {
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      return { server: 'openai', fromSpec: false };
    }
    return { ...serverFromModels(await res.json(), model), fromSpec: false };
  } catch (err) {
    // A body cut short is no answer; a body that is not JSON is an answer that names no server.
    return err instanceof SyntaxError ? { server: 'openai', fromSpec: false } : undefined;
  }
}
