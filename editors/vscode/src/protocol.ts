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
  /** Where the hit sits: definition, test, docs, config, ... (from names and paths). */
  roles: string[];
  /** The last commit's author and time (seconds since the epoch) of the file, when it is in git. */
  author: string | null;
  modified: number | null;
  /** The user's tags of the file or document. */
  tags?: string[];
  /** `explain: true`: each side's rank and raw score, and the fused score. */
  explain?: HitExplain;
  /** The file changed since it was indexed and the chunk is not in it any more: the range is the indexed one. */
  stale: boolean;
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
  /** An index run is under way. */
  indexing: boolean;
  /** Files of that run whose text is not searchable yet. */
  filesPending: number;
}

export interface HitExplain {
  lexicalRank: number | null;
  lexicalScore: number | null;
  semanticRank: number | null;
  semanticScore: number | null;
  fusedScore: number;
}

/** `explain: true`: how the query was read and fused. */
export interface QueryExplain {
  style: "identifier" | "natural" | "mixed";
  identifiers: string[];
  words: string[];
  dropped: string[];
  fusion: "convex" | "rrf" | "lexical" | "semantic";
  alpha: number | null;
  depth: number;
}

export interface RelatedFile {
  path: string | null;
  module: string;
  importedBy: string[];
  uri?: string;
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
  explain?: QueryExplain;
  relatedFiles?: RelatedFile[];
  expandedTerms?: string[];
  /** `groupBy`: indexes into `hits`. */
  groups?: { value: string | null; count: number; hits: number[] }[];
  followUps?: { query: string; options: string; reason: string }[];
  summary?: {
    totalHits: number;
    returned: number;
    files: number;
    topFiles: { path: string | null; hits: number }[];
    languages: Record<string, number>;
    kinds: Record<string, number>;
  };
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
  merkleRoot?: string;
  semantic?: { ready: boolean; state: string; model: string | null; message: string | null };
  watch?: { active: boolean; error: string | null; pendingChanges: number; changesApplied: number };
  lastRun?: string;
  /** Every workspace folder's own status (the fields above are the first folder's); always sent. */
  folders?: Omit<IndexStatus, "folders">[];
}

/**
 * Every field of each answer, for test/protocol.test.ts, which compares them with the
 * server's schema (server/sylk/lsp/protocol.schema.json). TypeScript makes each list
 * name every field of its interface and nothing else.
 */
type AllFields<T> = { readonly [K in keyof Required<T>]: true };

export const SEARCH_HIT_FIELDS: AllFields<SearchHit> = {
  uri: true, path: true, range: true, language: true, type: true, kind: true, symbol: true, containerName: true,
  score: true, lexicalRank: true, semanticRank: true, snippet: true, snippetRange: true, highlights: true,
  roles: true, author: true, modified: true, tags: true, explain: true, stale: true, document: true, commit: true,
};

export const SEARCH_RESULT_FIELDS: AllFields<SearchResult> = {
  query: true, mode: true, tookMs: true, totalHits: true, hits: true, facets: true, index: true, message: true,
  explain: true, relatedFiles: true, expandedTerms: true, groups: true, followUps: true, summary: true,
};

export const INDEX_STATUS_FIELDS: AllFields<IndexStatus> = {
  ready: true, indexing: true, embedding: true, root: true, indexDir: true, files: true, symbols: true,
  chunks: true, embedded: true, pending: true, languages: true, indexBytes: true, lastIndexed: true,
  skipped: true, readOnly: true, merkleRoot: true, semantic: true, watch: true, lastRun: true, folders: true,
};
