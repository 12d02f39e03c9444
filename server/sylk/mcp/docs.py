"""What the MCP server tells agents: its instructions and each tool's description."""

from __future__ import annotations

INSTRUCTIONS = """\
Sylk searches this workspace's code locally: an index of symbols (definitions), \
full text (BM25) and meaning (embeddings of every function, class, section and file).
- search_symbol: you know (part of) a name: fuzzy, camelCase/snake_case aware \
("hrp" finds HttpRetryPolicy, "Repo.get" finds methods named get* of *Repo* classes). \
Fast and exact about definitions.
- search_code: you know words that appear in the code (mode "lexical"), or you can \
describe what the code does (mode "semantic"), or both (mode "hybrid", the default). \
Hits are chunks (a function, a class, a markdown section) with a snippet and line range.
- find_similar_code: code that does the same as the code at a file and line (by meaning).
- find_definition: where a name is defined, nearest first when you give the file that \
uses it (its own and imported definitions, then the same folder, then the same language).
- find_references: every place a name occurs (whole words), with the symbol around it.
- grep: every line matching a regular expression or an exact string (punctuation and \
all), as rg finds it.
- get_callers: the functions that call a name, with each call site.
- get_status: how much is indexed and embedded, and whether work is running.
- index: after you changed files, to be sure the index has them (give their paths, or \
none for every file; changes on disk are usually picked up by themselves within a \
second or two). reindex is index without paths; clear_index deletes the index and \
builds it again.
The workspace is the client's roots when it announces them (each with its own index; \
results then carry the "root" they are from), else the folder Sylk was started in. \
Resources: sylk://status, and sylk://symbols/<path> for the symbols of an indexed file.
Results are pages: pass the returned nextOffset as offset for more."""

SEARCH_CODE_DOC = """\
Search the workspace's code and docs by words and by meaning; returns ranked chunks \
(functions, methods, classes, markdown sections, config blocks, file headers) with \
path, 1-based line range, symbol, kind, language, score, per-side ranks and a snippet.

Modes: "lexical" matches the words of the query (identifiers are split, so "user id" \
finds get_user_by_id; best for names, error messages, exact terms). "semantic" matches \
meaning with a local embedding model (best for natural-language questions like "where \
do we retry failed HTTP calls"; needs the chunks embedded, see "semantic" in the result). \
"hybrid" (default) fuses both rankings and is the right choice when unsure. \
To find a definition by name, search_symbol is faster and more precise.

Filters narrow the results (all optional, combined with AND; values within one filter \
are OR): languages (e.g. ["python", "go"]), types (source_code, markdown, config, text, ...), \
paths (gitignore-style globs relative to the workspace root, e.g. ["app/**", "*.go"]), \
kinds (function, method, class, struct, interface, heading, ...), roles (test, \
repository, service, handler, command, query, entity: told from names and paths); in a \
git repository also authors (of each file's last commit) and modified_after/before, and \
types ["git_commit"] searches commit messages. The same filters work inline in the \
query: "lang:python path:app/** kind:function role:test author:\"Ann Lee\" retry backoff". \
exclude leaves out what its filters match (["role:test", "path:vendor/**", "lang:markdown"]); \
inline, a leading - does the same: "retry -role:test -path:vendor/**". A word or a \
"phrase" with a leading - leaves out the hits holding it ("retry -mock"); a query holding \
an upper-case OR is boolean: words side by side must all be held, OR takes either side, \
parentheses group ("(http OR grpc) client -test"). Inline filters and a /regex/ (a line \
of each hit matches it) join in too: "retry (lang:go OR path:cmd/**)", \
"handler -(role:test OR path:vendor/**)", "retry -/TODO|FIXME/".

Options add to the answer: fuzzy lets each word of five letters or more match with one typo; facets counts \
all matches by language, type, kind and folder ("facets"); group_by (file, language, \
folder, kind, author) groups the page's hits ("groups": value, count, and the indexes \
of its hits); related_files lists the files the hits' files import ("relatedFiles"); \
follow_ups suggests refined searches ("followUps"); summary counts the page's hits \
("summary"); explain gives each hit each side's rank and raw score ("explain"); \
expand also searches the words inside identifiers and synonyms ("expandedTerms").

Pagination: "totalHits" counts the matches found, "nextOffset" is the offset of the \
next page (null when there is none). "semantic" says how complete the semantic side is: \
while embedding runs, the chunks not embedded yet are searched by a quick static model \
("quickChunks"; less precise), or not at all when the quick pass is off. Lines \
are where the code is now, even in a file changed since it was indexed; a hit with \
"stale": true could not be found in its changed file (its lines are the old ones, its \
snippet empty): reindex and search again."""

SEARCH_SYMBOL_DOC = """\
Find symbol definitions (classes, functions, methods, types, constants, markdown headings) \
by name, fuzzily: exact > prefix > camel-hump/snake-word initials ("hrp" -> \
HttpRetryPolicy, "gubi" -> get_user_by_id) > substring > subsequence, types before \
functions on ties, exported (public) definitions before private ones. "Container.name" \
restricts to members of a matching container ("HttpRetryPolicy.delay"); kind keeps some \
kinds, exported only public (true) or only private (false) definitions. Returns name, kind, \
container, path, 1-based line and column of the name, end line of the definition, \
exported, and signature. Use it when you know (part of) \
a name; use search_code for words inside bodies or for descriptions of behaviour. \
Pagination: pass the returned nextOffset as offset (null: no more)."""

FIND_DEFINITION_DOC = """\
Where an identifier is defined, from the symbol index of every language: a name match \
(no type analysis), exact name, the same case first. Give "path" (the workspace file \
that uses the name) to rank from it: definitions in that file, then in the files it \
imports, then in its folder, then in its language, then the rest ("near" says which). \
"Class.method" or "obj.method" ranks definitions whose container is the qualifier first. \
Returns name, kind, container, path, 1-based line and column of the name, end line, \
signature and near."""

FIND_REFERENCES_DOC = """\
Every whole-word occurrence of an identifier in the indexed files, from the index \
(what "rg -w -F name" finds, without reading the files): "get" never matches get_user. \
A name match, in every language, case-sensitive. Each occurrence has path, 1-based line, \
column and endColumn (UTF-16), the enclosing symbol ("Class.method"), the line's text, \
"in" (code, comment or string), "call" (a call site) and "declaration" (a definition's \
own name). code_only leaves out comments and strings; path narrows to files (a \
gitignore-style glob or a file); exclude leaves out files (["path:vendor/**", \
"lang:markdown"]: path, lang, type, package). "total" counts every occurrence; pages by offset."""

GET_CALLERS_DOC = """\
Who calls a function or method: the call sites of a name (the name of a call expression \
in that language's syntax, from the index: no file is read), grouped by the function or \
method around each ("caller": name, kind, container, path, 1-based line; null for a \
call at a file's top level) with each call's 1-based line, column and text. A name \
match, case-sensitive, in every language: callers of other functions with the same name \
are included."""

GET_STATUS_DOC = """\
The index of this workspace: files, symbols, chunks, how many chunks are embedded and \
pending ("quick": the pending chunks a quick static model stands in for), languages, skipped files \
(total, and per reason its count and the first 20 files; skipped="all" lists every \
one), the last indexing run, and what runs now ("state": opening, indexing, \
embedding or ready, with progress). "roots" says where the workspace folders come \
from (the client's roots, or the command line); with several folders the first one's \
status is at the top level and every one's under "folders". Poll it after index or \
reindex to follow the embedding."""

INDEX_DOC = """\
Bring the index up to date with the files on disk: only added, changed and deleted \
files are processed (seconds, usually), then their new chunks are embedded in the \
background. "paths" (files or folders, relative to the workspace root or absolute) \
limits the run to them, e.g. the files you just wrote or deleted; without paths every \
file is checked. With wait=true (default) it returns when the files are indexed (or \
after about 45 s, saying the run continues in the background), sending progress \
notifications when the call has a progress token; with wait=false it returns at once. \
The answer says which ("indexed": done or running), what changed ("changes": added, \
changed, deleted, unchanged), whether embedding runs ("embedding"), and which of the \
paths the ignore rules leave out ("ignored") or exist nowhere ("notFound"). A path \
outside the workspace folders is an error."""

REINDEX_DOC = """\
Bring the index up to date with every file on disk: index without paths. Only added, \
changed and deleted files are processed (seconds, usually), then their new chunks are \
embedded in the background. With wait=true (default) it returns when the files are \
indexed (or after about 45 s, saying the run continues in the background); with \
wait=false it returns at once. The answer says which ("indexed": done or running), what \
changed, and whether embedding runs ("embedding"); follow progress with get_status."""

CLEAR_INDEX_DOC = """\
Delete the index (of every workspace folder, or of the one named by "folder") and build \
it again from scratch, in the background: for an index that seems wrong, after index \
and reindex did not help. Searches answer from what is indexed again meanwhile; poll \
get_status until "state" is ready. The answer lists each folder's index folder removed \
("cleared": root, removed, error). Refused for an index another Sylk process writes."""

FIND_SIMILAR_CODE_DOC = """\
Code that resembles the code at a place, by meaning: the function, method, class or \
section around "line" of "path" is compared with every embedded chunk of its workspace \
folder (from the stored vectors: no model call), and the nearest come back, most \
similar first, without the code itself or its near-copies in the same file. Use it to \
find duplicates, other implementations of the same idea, or examples to follow. Each \
chunk: path, 1-based startLine and endLine, symbol, kind, language, "score" (cosine \
similarity, 1 is identical) and the first lines as "snippet"; "chunk" is the code \
compared. Needs semantic search: an error says so when embedding is off or the model \
cannot load; while the file is not embedded yet, "similar" is empty and "message" says \
why. The path must be an indexed file."""

STATUS_RESOURCE_DOC = """\
The index status, as get_status answers it (JSON): files, chunks embedded and pending, \
skipped files, the last run, the workspace folders and where they come from."""

SYMBOLS_RESOURCE_DOC = """\
The symbols of one indexed file (JSON): its path, language and every definition in \
file order (name, kind, container, 1-based line and column of the name, end line, \
signature). The path is relative to the workspace root; with several workspace \
folders, ?root=<folder name> picks the folder (else the first that indexed the path). \
An unknown path is an error."""

GREP_DOC = """\
Every line of the indexed files that a regular expression (Python re syntax; the \
syntax rg shares works) or, with exact=true, a literal string matches: what "rg" finds \
in the same files, answered from a trigram index. Use it for exact text with \
punctuation ("foo->bar(", "Content-Type", "TODO(alice)") and for patterns \
("def \\w+_cache\\("); use search_code for ranked, fuzzy or natural-language search. \
case: "smart" (default: insensitive unless the pattern has an upper-case letter), \
"sensitive" or "insensitive"; whole_word like rg -w. Each hit: path, 1-based line, the \
line's text, "matches" (1-based UTF-16 start and end columns of each match) and the \
symbol around the line. "totalHits" counts matching lines (a lower bound when \
"totalHitsLowerBound"); "scanned" means no literal of 3+ characters could be looked up \
and every file was read; "partial" that a time limit cut the search short."""
