/**
 * "Sylk: Semantic Search": a QuickPick that asks `sylk/search` as you type (debounced),
 * previews the highlighted hit, opens it on accept, and has buttons for the mode and
 * the filters. The mapping from results to items lives in searchItems.ts.
 */

import * as vscode from "vscode";
import { FacetValue, IndexStatus, Range, SearchResult, SearchHit, SearchMode, SEARCH_MODES } from "./protocol";
import {
  buildParams,
  FilterChoice,
  filterChoices,
  filtersFromChoices,
  HitItem,
  nextMode,
  pickerTitle,
  resultItems,
  SearchItem,
  SearchState,
} from "./searchItems";
import { hitTarget } from "./sylkDocuments";

/** What the picker needs from the extension: the requests, and a place to remember the state. */
export interface SearchBackend {
  search(params: ReturnType<typeof buildParams>, token: vscode.CancellationToken): Promise<SearchResult>;
  status(): Promise<IndexStatus | undefined>;
  debounceMs(): number;
  defaultMode(): SearchMode;
  memento: vscode.Memento;
}

const STATE_KEY = "sylk.searchState";

const highlight = vscode.window.createTextEditorDecorationType({
  backgroundColor: new vscode.ThemeColor("editor.findMatchHighlightBackground"),
  borderColor: new vscode.ThemeColor("editor.findMatchHighlightBorder"),
  borderStyle: "solid",
  borderWidth: "1px",
});

type PickItem = SearchItem & vscode.QuickPickItem;

function toRange(r: Range): vscode.Range {
  return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

/** Open a hit: a file, or a `sylk:` URI through the content provider (extension.ts). */
async function show(hit: SearchHit, preview: boolean): Promise<vscode.TextEditor | undefined> {
  const target = hitTarget(hit);
  try {
    const editor = await vscode.window.showTextDocument(vscode.Uri.parse(target.uri), {
      preview,
      preserveFocus: preview,
      selection: toRange(target.selection),
    });
    editor.revealRange(toRange(target.reveal), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    editor.setDecorations(highlight, hit.highlights.map(toRange));
    if (!preview) {
      // The opened hit keeps its highlights until the cursor moves.
      const once = vscode.window.onDidChangeTextEditorSelection((e) => {
        if (e.textEditor === editor && e.kind !== undefined) {
          editor.setDecorations(highlight, []);
          once.dispose();
        }
      });
    }
    return editor;
  } catch (err) {
    if (!preview) {
      void vscode.window.showErrorMessage(`Sylk: cannot open ${hit.path ?? hit.uri}: ${String(err)}`);
    }
    return undefined;
  }
}

function modeButton(mode: SearchMode): vscode.QuickInputButton {
  const icon = mode === "semantic" ? "lightbulb" : mode === "lexical" ? "whole-word" : "combine";
  return {
    iconPath: new vscode.ThemeIcon(icon),
    tooltip: `Mode: ${mode} (click for ${nextMode(mode)}; modes: ${SEARCH_MODES.join(", ")})`,
  };
}

function filterButton(active: boolean): vscode.QuickInputButton {
  return {
    iconPath: new vscode.ThemeIcon(active ? "filter-filled" : "filter"),
    tooltip: "Filters: languages, types, kinds, folders",
  };
}

export function semanticSearch(backend: SearchBackend): void {
  const saved = backend.memento.get<SearchState>(STATE_KEY);
  const state: SearchState = saved ?? { mode: backend.defaultMode(), filters: {} };
  const original = vscode.window.activeTextEditor;
  const qp = vscode.window.createQuickPick<PickItem>();
  qp.placeholder = "Search code by words or meaning (inline filters: lang:python path:src/** kind:function type:markdown)";
  qp.matchOnDescription = false;
  qp.matchOnDetail = false;
  qp.ignoreFocusOut = false;

  let last: SearchResult | undefined;
  let facets: Record<string, FacetValue[]> = {};
  let timer: NodeJS.Timeout | undefined;
  let pending: vscode.CancellationTokenSource | undefined;
  let accepted = false;
  let switching = false;
  let previewed: vscode.TextEditor | undefined;

  const refreshChrome = (): void => {
    const hasFilters = Object.values(state.filters).some((v) => (Array.isArray(v) ? v.length > 0 : v !== undefined));
    qp.buttons = [modeButton(state.mode), filterButton(hasFilters)];
    qp.title = pickerTitle(state, last);
  };

  const run = async (offset: number): Promise<void> => {
    pending?.cancel();
    const query = qp.value;
    if (query.trim() === "") {
      last = undefined;
      qp.items = [];
      qp.busy = false;
      refreshChrome();
      return;
    }
    const cts = new vscode.CancellationTokenSource();
    pending = cts;
    qp.busy = true;
    try {
      const result = await backend.search(buildParams(query, state, offset), cts.token);
      if (cts.token.isCancellationRequested) {
        return;
      }
      last = result;
      if (result.facets && Object.keys(result.facets).length > 0) {
        facets = result.facets;
      }
      const items = resultItems(result, offset, offset > 0 ? qp.items : []) as PickItem[];
      qp.items = items;
      if (offset > 0) {
        const first = items.find((i) => i.role === "hit" && i.hit === result.hits[0]);
        if (first !== undefined) {
          qp.activeItems = [first];
        }
      }
    } catch (err) {
      if (cts.token.isCancellationRequested) {
        return;
      }
      const message = err instanceof Error ? err.message : String(err);
      qp.items = [{ role: "message", label: "$(error) Search failed", detail: message, alwaysShow: true }] as PickItem[];
    } finally {
      if (pending === cts) {
        qp.busy = false;
        pending = undefined;
      }
      refreshChrome();
    }
  };

  const schedule = (): void => {
    if (timer !== undefined) {
      clearTimeout(timer);
    }
    timer = setTimeout(() => void run(0), backend.debounceMs());
  };

  const chooseFilters = async (): Promise<void> => {
    const choices = filterChoices(state.filters, facets, await backend.status());
    const groupTitle: Record<FilterChoice["group"], string> = {
      languages: "Languages",
      types: "Types",
      kinds: "Kinds",
      paths: "Folders",
    };
    const items: (vscode.QuickPickItem & { choice?: FilterChoice })[] = [];
    let group: string | undefined;
    for (const c of choices) {
      if (c.group !== group) {
        group = c.group;
        items.push({ label: groupTitle[c.group], kind: vscode.QuickPickItemKind.Separator });
      }
      items.push({ label: c.label, description: c.description, picked: c.picked, choice: c });
    }
    const picked = await vscode.window.showQuickPick(items, {
      canPickMany: true,
      title: "Sylk Search: filters (none checked: search everything)",
      placeHolder: "Check the languages, types, kinds and folders to search in",
    });
    if (picked !== undefined) {
      state.filters = filtersFromChoices(picked.flatMap((p) => (p.choice ? [p.choice] : [])), state.filters);
      void backend.memento.update(STATE_KEY, state);
    }
  };

  qp.onDidChangeValue(schedule);
  qp.onDidChangeActive(async (items) => {
    const item = items[0];
    if (item !== undefined && item.role === "hit") {
      previewed = (await show((item as HitItem).hit, true)) ?? previewed;
    }
  });
  qp.onDidAccept(async () => {
    const item = qp.activeItems[0];
    if (item === undefined || item.role === "message") {
      return;
    }
    if (item.role === "more") {
      await run(item.offset);
      return;
    }
    accepted = true;
    qp.hide();
    await show(item.hit, false);
  });
  qp.onDidTriggerButton(async (button) => {
    if (button.tooltip?.startsWith("Mode:")) {
      state.mode = nextMode(state.mode);
      void backend.memento.update(STATE_KEY, state);
      refreshChrome();
      await run(0);
      return;
    }
    switching = true;
    await chooseFilters();
    switching = false;
    refreshChrome();
    qp.show();
    await run(0);
  });
  qp.onDidHide(async () => {
    if (switching) {
      return;
    }
    if (timer !== undefined) {
      clearTimeout(timer);
    }
    pending?.cancel();
    qp.dispose();
    previewed?.setDecorations(highlight, []);
    if (!accepted && original !== undefined && previewed !== undefined) {
      await vscode.window.showTextDocument(original.document, {
        viewColumn: original.viewColumn,
        selection: original.selection,
      });
    }
  });

  refreshChrome();
  qp.show();
}
