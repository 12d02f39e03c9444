/**
 * "Sylk: Semantic Search": a QuickPick that asks `sylk/search` as you type (debounced),
 * previews the highlighted hit or line, opens it on accept, and has buttons for the mode,
 * match case and whole word (modes exact and regex) and the filters. The mapping from
 * results to items lives in searchItems.ts.
 */

import * as vscode from "vscode";
import {
  AnySearchResult,
  CaseSensitivity,
  FacetValue,
  IndexStatus,
  isLineMode,
  isLineResult,
  Range,
  SearchMode,
  SEARCH_MODES,
} from "./protocol";
import {
  buildParams,
  errorItem,
  FilterChoice,
  filterChoices,
  filtersFromChoices,
  isSearchable,
  nextCase,
  nextMode,
  pickerTitle,
  restoreState,
  resultItems,
  SearchItem,
  SearchState,
} from "./searchItems";
import { HitTarget, hitTarget, lineTarget } from "./sylkDocuments";

/** What the picker needs from the extension: the requests, and a place to remember the state. */
export interface SearchBackend {
  search(params: ReturnType<typeof buildParams>, token: vscode.CancellationToken): Promise<AnySearchResult>;
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

/** Where an item opens, and what to highlight there. */
function itemTarget(item: SearchItem): { target: HitTarget; highlights: Range[]; name: string } | undefined {
  if (item.role === "hit") {
    return { target: hitTarget(item.hit), highlights: item.hit.highlights, name: item.hit.path ?? item.hit.uri };
  }
  if (item.role === "line") {
    return { target: lineTarget(item.hit), highlights: item.hit.matches, name: item.hit.path };
  }
  return undefined;
}

/** Open a hit or a line: a file, or a `sylk:` URI through the content provider (extension.ts). */
async function show(item: SearchItem, preview: boolean): Promise<vscode.TextEditor | undefined> {
  const where = itemTarget(item);
  if (where === undefined) {
    return undefined;
  }
  const { target, highlights, name } = where;
  try {
    const editor = await vscode.window.showTextDocument(vscode.Uri.parse(target.uri), {
      preview,
      preserveFocus: preview,
      selection: toRange(target.selection),
    });
    editor.revealRange(toRange(target.reveal), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    editor.setDecorations(highlight, highlights.map(toRange));
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
      void vscode.window.showErrorMessage(`Sylk: cannot open ${name}: ${String(err)}`);
    }
    return undefined;
  }
}

const MODE_ICONS: Record<SearchMode, string> = {
  hybrid: "combine",
  lexical: "symbol-text",
  semantic: "lightbulb",
  exact: "quote",
  regex: "regex",
};

function modeButton(mode: SearchMode): vscode.QuickInputButton {
  return {
    iconPath: new vscode.ThemeIcon(MODE_ICONS[mode]),
    tooltip: `Mode: ${mode} (click for ${nextMode(mode)}; modes: ${SEARCH_MODES.join(", ")})`,
  };
}

const CASE_TOOLTIPS: Record<string, string> = {
  smart: "smart (ignore case unless the pattern has an upper-case letter)",
  true: "match case",
  false: "ignore case",
};

function caseButton(value: CaseSensitivity): vscode.QuickInputButton {
  return {
    iconPath: new vscode.ThemeIcon("case-sensitive"),
    tooltip: `Match case: ${CASE_TOOLTIPS[String(value)]} (click for ${CASE_TOOLTIPS[String(nextCase(value))]})`,
  };
}

function wholeWordButton(on: boolean): vscode.QuickInputButton {
  return {
    iconPath: new vscode.ThemeIcon("whole-word"),
    tooltip: `Whole word: ${on ? "on" : "off"} (click to turn ${on ? "off" : "on"})`,
  };
}

const PLACEHOLDERS: Record<SearchMode, string> = {
  hybrid: "Search code by words or meaning (inline filters: lang:python path:src/** kind:function type:markdown)",
  lexical: "Search code by words (inline filters: lang:python path:src/** kind:function type:markdown)",
  semantic: "Search code by meaning (inline filters: lang:python path:src/** kind:function type:markdown)",
  exact: "Find every line containing this text, as typed (filters: the filter button)",
  regex: "Find every line matching a regular expression, Python syntax (filters: the filter button)",
};

function filterButton(active: boolean): vscode.QuickInputButton {
  return {
    iconPath: new vscode.ThemeIcon(active ? "filter-filled" : "filter"),
    tooltip: "Filters: languages, types, kinds, folders",
  };
}

export function semanticSearch(backend: SearchBackend): void {
  const state: SearchState = restoreState(backend.memento.get<unknown>(STATE_KEY), backend.defaultMode());
  const original = vscode.window.activeTextEditor;
  const qp = vscode.window.createQuickPick<PickItem>();
  qp.matchOnDescription = false;
  qp.matchOnDetail = false;
  qp.ignoreFocusOut = false;

  let last: AnySearchResult | undefined;
  let facets: Record<string, FacetValue[]> = {};
  let timer: NodeJS.Timeout | undefined;
  let pending: vscode.CancellationTokenSource | undefined;
  let accepted = false;
  let switching = false;
  let previewed: vscode.TextEditor | undefined;

  const refreshChrome = (): void => {
    const hasFilters = Object.values(state.filters).some((v) => (Array.isArray(v) ? v.length > 0 : v !== undefined));
    qp.buttons = isLineMode(state.mode)
      ? [modeButton(state.mode), caseButton(state.caseSensitive), wholeWordButton(state.wholeWord), filterButton(hasFilters)]
      : [modeButton(state.mode), filterButton(hasFilters)];
    qp.title = pickerTitle(state, last);
    qp.placeholder = PLACEHOLDERS[state.mode];
  };

  const run = async (offset: number): Promise<void> => {
    pending?.cancel();
    const query = qp.value;
    if (!isSearchable(query, state.mode)) {
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
      if (!isLineResult(result) && result.facets && Object.keys(result.facets).length > 0) {
        facets = result.facets;
      }
      const items = resultItems(result, offset, offset > 0 ? qp.items : []) as PickItem[];
      qp.items = items;
      if (offset > 0) {
        const first = items.find((i) => (i.role === "hit" || i.role === "line") && i.hit === result.hits[0]);
        if (first !== undefined) {
          qp.activeItems = [first];
        }
      }
    } catch (err) {
      if (cts.token.isCancellationRequested) {
        return;
      }
      qp.items = [errorItem(err)] as PickItem[];
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
      packages: "Packages",
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
    if (item !== undefined && (item.role === "hit" || item.role === "line")) {
      previewed = (await show(item, true)) ?? previewed;
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
    await show(item, false);
  });
  qp.onDidTriggerButton(async (button) => {
    const option = button.tooltip?.split(":")[0];
    if (option === "Mode" || option === "Match case" || option === "Whole word") {
      if (option === "Mode") {
        state.mode = nextMode(state.mode);
      } else if (option === "Match case") {
        state.caseSensitive = nextCase(state.caseSensitive);
      } else {
        state.wholeWord = !state.wholeWord;
      }
      void backend.memento.update(STATE_KEY, state);
      last = undefined; // the totals were another search's
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
