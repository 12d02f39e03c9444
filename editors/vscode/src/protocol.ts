/**
 * The wire shapes of Sylk's custom requests (camelCase JSON), as the server sends them.
 * Plain types only: this module is shared by the extension and the unit tests.
 */

export const SEARCH_REQUEST = "sylk/search";
export const STATUS_REQUEST = "sylk/status";
export const DOCUMENT_TEXT_REQUEST = "sylk/documentText";
export const REINDEX_COMMAND = "sylk.reindex";

/** The titles of the server's work-done progress (see server/sylk/lsp/server.py). */
export const INDEXING_TITLE = "Sylk: Indexing workspace";
export const EMBEDDING_TITLE = "Sylk: Embedding";

export type SearchMode = "hybrid" | "lexical" | "semantic";
export const SEARCH_MODES: readonly SearchMode[] = ["hybrid", "lexical", "semantic"];

/** The document types a search can be narrowed to (`filters.types`). */
export const DOCUMENT_TYPES: readonly string[] = ["source_code", "markdown", "config", "text"];

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface SearchFilters {
  languages?: string[];
  types?: string[];
  paths?: string[];
  kinds?: string[];
  minLines?: number;
  maxLines?: number;
}

export interface SearchParams {
  query: string;
  mode?: SearchMode;
  limit?: number;
  offset?: number;
  filters?: SearchFilters;
  fuzzy?: boolean;
  facets?: boolean;
  contextLines?: number;
}

/**
 * The URI scheme of what has no file: `sylk://document/<id>` (a virtual document) and
 * `sylk://commit/<sha>` (a commit); `sylk/documentText` returns its text.
 */
export const SYLK_SCHEME = "sylk";

export interface SearchHit {
  /** Always set: a `file:` URI, or a `sylk:` URI (see SYLK_SCHEME). */
  uri: string;
  /** The workspace path; `sylk:/<id>` for a virtual document; a commit's first file, or null. */
  path: string | null;
  /** null for a commit. */
  range: Range | null;
  language: string | null;
  type: string;
  kind: string | null;
  symbol: string | null;
  containerName: string | null;
  score: number;
  lexicalRank: number | null;
  semanticRank: number | null;
  snippet: string;
  /** null for a commit. */
  snippetRange: Range | null;
  highlights: Range[];
  /** The file changed since it was indexed and the chunk is not in it any more: the range is the indexed one. */
  stale?: boolean;
  /** A virtual document's hit. */
  document?: { id: string; type?: string; title?: string; tags?: string[]; metadata?: Record<string, unknown> };
  /** A commit's hit (`type` "git_commit"). */
  commit?: { sha: string; files: string[] };
}

/** `sylk/documentText`: the text behind a `sylk:` URI. */
export interface DocumentTextParams {
  uri: string;
}

export interface DocumentText {
  uri: string;
  text: string;
  languageId?: string;
  title?: string;
}

export interface FacetValue {
  value: string;
  count: number;
}

export interface IndexState {
  files: number;
  chunks: number;
  embedded: number;
  pending: number;
  ready: boolean;
}

export interface SearchResult {
  query: string;
  mode: SearchMode;
  tookMs: number;
  totalHits: number;
  hits: SearchHit[];
  facets: Record<string, FacetValue[]>;
  index: IndexState;
  message?: string;
}

/** The files the index left out for one reason (binary, too-large, ...), in path order. */
export interface SkippedReason {
  reason: string;
  count: number;
  /** The first 20 of them, or every one when `skipped: "all"` was asked. */
  files: string[];
}

/** `sylk/status`'s skipped files: the total, and per reason (most files first) a count and examples. */
export interface SkippedFiles {
  total: number;
  /** Every skipped file is listed in `byReason[].files`. */
  complete: boolean;
  byReason: SkippedReason[];
}

/** `sylk/status` params: `skipped` "sample" (the default: 20 files of each reason) or "all". */
export interface StatusParams {
  skipped?: "sample" | "all";
}

/** `sylk/status`: the server's state plus the index's (only `ready`, `indexing`, `embedding` are always there). */
export interface IndexStatus {
  ready: boolean;
  indexing: boolean;
  embedding: boolean;
  root?: string;
  indexDir?: string;
  files?: number;
  symbols?: number;
  chunks?: number;
  embedded?: number;
  pending?: number;
  languages?: { language: string; files: number; symbols: number }[];
  indexBytes?: number;
  lastIndexed?: number | null;
  skipped?: SkippedFiles;
  readOnly?: boolean;
  semantic?: { ready: boolean; model: string | null; message: string | null };
  watch?: { active: boolean; error: string | null; pendingChanges: number; changesApplied: number };
  lastRun?: string;
}
