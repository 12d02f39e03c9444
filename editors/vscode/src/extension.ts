/**
 * The Sylk extension: runs `sylk serve --stdio` for the workspace through
 * vscode-languageclient, passes the `sylk.*` settings to it, and adds the commands
 * "Sylk: Semantic Search", "Sylk: Reindex Workspace", "Sylk: Clear Index", "Sylk: Show
 * Index Status", "Sylk: Restart Server" and a status bar item that follows indexing and embedding.
 *
 * Workspace symbols (Ctrl+T), document symbols and hover need nothing here: the
 * language client wires the standard requests.
 *
 * Workspace trust: in an untrusted workspace (restricted mode) the server gets
 * `trusted: false` (it ignores the workspace's .sylk.toml and [tool.sylk] and runs no
 * git), the restricted settings come from the user's settings only, no sylk inside the
 * workspace is run, and the status bar says "(restricted)". Granting trust restarts the
 * server.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from "vscode-languageclient/node";
import {
  AnySearchResult,
  CLEAR_INDEX_COMMAND,
  ClearIndexResult,
  DOCUMENT_TEXT_REQUEST,
  DocumentText,
  IndexStatus,
  REINDEX_COMMAND,
  SEARCH_MODES,
  SEARCH_REQUEST,
  SearchMode,
  STATUS_REQUEST,
  StatusParams,
  SYLK_SCHEME,
} from "./protocol";
import { semanticSearch } from "./searchPicker";
import { defaultEnvironment, DOCS_FILE, INSTALL_COMMAND, NotFound, resolveServerPath, SERVER_ARGS } from "./serverPath";
import {
  initializationOptions,
  JsonObject,
  Manifest,
  restrictedKeys,
  SECTION,
  serverSettingKeys,
  toServerSettings,
  userValue,
} from "./settings";
import { describeStatus, ProgressTracker, restrictedLines, skippedLines, statusBarView } from "./statusModel";
import { commandLinks, OPEN_URI_COMMAND, SylkDocuments } from "./sylkDocuments";

const STATUS_REFRESH_MS = 30_000;

class Sylk implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private error: string | undefined;
  private status: IndexStatus | undefined;
  private readonly progress = new ProgressTracker();
  private readonly output: vscode.OutputChannel;
  private readonly statusItem: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly serverKeys: string[];
  /** The settings an untrusted workspace cannot set (package.json's restrictedConfigurations). */
  private readonly restricted: string[];
  /** The last start or restart: the next one waits for it (activation, trust granted and serverPath changed may overlap). */
  private lifecycle: Promise<void> = Promise.resolve();
  private refreshTimer: NodeJS.Timeout | undefined;
  /** The start-up errors already shown as a notification: each once a session, not at every restart. */
  private readonly notified = new Set<string>();
  // the text of sylk: URIs (virtual documents, commits), asked of the running server
  private readonly documents = new SylkDocuments((params) => {
    const client = this.client;
    if (client === undefined || !client.isRunning()) {
      return Promise.reject(new Error(this.error ?? "the server is not running"));
    }
    return client.sendRequest<DocumentText>(DOCUMENT_TEXT_REQUEST, params);
  });

  constructor(private readonly context: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel("Sylk");
    this.statusItem = vscode.window.createStatusBarItem("sylk.status", vscode.StatusBarAlignment.Left, 10);
    this.statusItem.name = "Sylk";
    this.statusItem.command = "sylk.showStatus";
    const manifest = context.extension.packageJSON as Manifest & {
      contributes?: { configuration?: { properties?: Record<string, unknown> } };
    };
    this.serverKeys = serverSettingKeys(manifest.contributes?.configuration?.properties ?? {});
    this.restricted = restrictedKeys(manifest);
    this.disposables.push(
      this.output,
      this.statusItem,
      vscode.commands.registerCommand("sylk.semanticSearch", () => this.search()),
      vscode.commands.registerCommand("sylk.reindexWorkspace", () => this.reindex()),
      vscode.commands.registerCommand("sylk.clearWorkspaceIndex", () => this.clearIndex()),
      vscode.commands.registerCommand("sylk.showStatus", () => this.showStatus()),
      vscode.commands.registerCommand("sylk.restartServer", () => this.restart()),
      vscode.workspace.onDidChangeConfiguration((e) => this.configurationChanged(e)),
      // restricted mode ends: start again with the workspace's config files, git and settings
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.restart()),
      vscode.workspace.onDidChangeWorkspaceFolders(() => {
        if (this.client === undefined) {
          void this.launch();
        }
      }),
      vscode.workspace.onDidSaveTextDocument(() => this.scheduleRefresh(2000)),
      vscode.workspace.registerTextDocumentContentProvider(SYLK_SCHEME, {
        provideTextDocumentContent: (uri) => this.documents.text(uri.toString()),
      }),
      vscode.workspace.onDidOpenTextDocument((doc) => this.virtualOpened(doc)),
      vscode.commands.registerCommand(OPEN_URI_COMMAND, (uri: string, line?: number) => openAt(uri, line ?? 0)),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        if (doc.uri.scheme === SYLK_SCHEME) {
          this.documents.forget(doc.uri.toString());
        }
      }),
    );
    this.render();
    this.statusItem.show();
  }

  /** A `sylk:` document takes the language the server gave it (a note is Markdown). */
  private virtualOpened(doc: vscode.TextDocument): void {
    if (doc.uri.scheme !== SYLK_SCHEME) {
      return;
    }
    const language = this.documents.languageOf(doc.uri.toString());
    if (language !== undefined && language !== doc.languageId) {
      void vscode.languages.setTextDocumentLanguage(doc, language);
    }
  }

  /**
   * The settings the user set under `sylk`, nested for the server. In an untrusted
   * workspace the restricted ones come from the user's settings only.
   */
  private serverSettings(scope?: vscode.Uri): JsonObject {
    const config = vscode.workspace.getConfiguration(SECTION, scope ?? this.folder()?.uri);
    return toServerSettings(this.serverKeys, (key) => this.userValue(config, key));
  }

  private userValue(config: vscode.WorkspaceConfiguration, key: string): unknown {
    return userValue(config.inspect(key), vscode.workspace.isTrusted || !this.restricted.includes(key));
  }

  private folder(): vscode.WorkspaceFolder | undefined {
    return vscode.workspace.workspaceFolders?.[0];
  }

  async start(): Promise<void> {
    const folder = this.folder();
    if (folder === undefined) {
      this.error = undefined;
      this.statusItem.text = "$(database) Sylk";
      this.statusItem.tooltip = "Sylk: open a folder to index it";
      return;
    }
    const trusted = vscode.workspace.isTrusted;
    const configured = this.userValue(vscode.workspace.getConfiguration(SECTION), "serverPath");
    const setting = typeof configured === "string" ? configured : "sylk";
    const resolved = resolveServerPath(setting, defaultEnvironment(folder.uri.fsPath, trusted));
    if ("error" in resolved) {
      this.notFound(resolved);
      return;
    }
    this.error = undefined;
    // stdio with SERVER_ARGS as written: naming a stdio transport makes the client append a second --stdio
    const serverOptions: ServerOptions = {
      command: resolved.path,
      args: [...SERVER_ARGS],
      options: { cwd: folder.uri.fsPath },
    };
    const clientOptions: LanguageClientOptions = {
      // every file, in every folder: the server decides what it indexes (all the workspace
      // folders go to it, the settings answered per folder through the middleware below)
      documentSelector: [{ scheme: "file" }],
      outputChannel: this.output,
      // `trusted` false: the server ignores the workspace's config files and does not run git
      initializationOptions: initializationOptions(this.serverSettings(folder.uri), trusted),
      middleware: {
        workspace: {
          // The server asks for the section `sylk`: answer with what the user set, nested.
          configuration: async (params, token, next) => {
            const result = params.items.every((i) => i.section === SECTION) ? [] : await next(params, token);
            if (result instanceof Error) {
              return result;
            }
            return params.items.map((item, i) =>
              item.section === SECTION
                ? this.serverSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
                : (result as unknown[])[i],
            );
          },
        },
        // hover's related code links to sylk: URIs, which VS Code drops from a hover: make them commands
        provideHover: async (document, position, token, next) => {
          const hover = await next(document, position, token);
          return hover ? withCommandLinks(hover) : hover;
        },
        handleWorkDoneProgress: (token, params, next) => {
          if (this.progress.handle(token, params)) {
            this.scheduleRefresh(0);
          }
          this.render();
          next(token, params);
        },
      },
    };
    const client = new LanguageClient("sylk", "Sylk", serverOptions, clientOptions);
    this.client = client;
    client.onDidChangeState((e) => {
      if (e.newState === State.Stopped && this.client === client) {
        this.progress.clear();
        this.status = undefined;
        this.render();
      }
    });
    this.render();
    try {
      await client.start();
    } catch (err) {
      this.client = undefined;
      this.fail(`Sylk: the server (${[resolved.path, ...SERVER_ARGS].join(" ")}) failed to start: ${errorText(err)}`);
      return;
    }
    this.scheduleRefresh(0);
  }

  /**
   * No sylk to run. Logged and shown in the status bar at every try; the notification
   * once a session (a restart or a second window's folder does not repeat it). When
   * nothing is installed it says how to install the server.
   */
  private notFound(resolved: NotFound): void {
    const detail = `Looked for: ${resolved.tried.join(", ")}`;
    if (resolved.reason !== "missing") {
      this.fail(resolved.error, detail, true);
      return;
    }
    const first = this.record(resolved.error, detail);
    if (first) {
      this.showInstallHelp(resolved.error);
    }
  }

  private showInstallHelp(message: string): void {
    const copy = "Copy Install Command";
    const docs = "Open Install Guide";
    void vscode.window.showErrorMessage(message, copy, docs, "Open Settings").then(async (choice) => {
      if (choice === copy) {
        await vscode.env.clipboard.writeText(INSTALL_COMMAND);
        void vscode.window.showInformationMessage(
          `Sylk: copied "${INSTALL_COMMAND}". Run it in a terminal, then run "Sylk: Restart Server".`,
        );
      } else if (choice === docs) {
        // the extension's own README, which ships in the .vsix: the guide is there offline
        // (opened as text: the Markdown preview cannot read the extension's folder in code-server)
        // (vsce stores README.md as readme.md in the .vsix; a checkout has README.md)
        const names = [DOCS_FILE, DOCS_FILE.toLowerCase()];
        const name = names.find((n) => fs.existsSync(path.join(this.context.extensionPath, n))) ?? DOCS_FILE;
        await vscode.window.showTextDocument(vscode.Uri.joinPath(this.context.extensionUri, name), { preview: true });
      } else if (choice === "Open Settings") {
        await vscode.commands.executeCommand("workbench.action.openSettings", "sylk.serverPath");
      }
    });
  }

  /** Log the error and show it in the status bar; true the first time this session. */
  private record(message: string, detail?: string): boolean {
    this.error = message;
    this.output.appendLine(message);
    if (detail !== undefined) {
      this.output.appendLine(detail);
    }
    this.render();
    const first = !this.notified.has(message);
    this.notified.add(message);
    return first;
  }

  /** Show an error (`once`: unless it was shown already this session), with a way to the setting and the log. */
  private fail(message: string, detail?: string, once = false): void {
    if (!this.record(message, detail) && once) {
      return;
    }
    void vscode.window.showErrorMessage(message, "Open Settings", "Show Log").then((choice) => {
      if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", "sylk.serverPath");
      } else if (choice === "Show Log") {
        this.output.show();
      }
    });
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.progress.clear();
    this.status = undefined;
    if (client !== undefined) {
      try {
        await client.stop();
      } catch (err) {
        this.output.appendLine(`Sylk: stopping the server failed: ${errorText(err)}`);
      }
    }
  }

  /** Start the server unless one runs, after any start or restart already under way. */
  launch(): Promise<void> {
    return this.serially(() => (this.client === undefined ? this.start() : Promise.resolve()));
  }

  /** Stop and start again, after any start or restart already under way. */
  restart(): Promise<void> {
    return this.serially(async () => {
      await this.stop();
      await this.start();
    });
  }

  private serially(step: () => Promise<void>): Promise<void> {
    this.lifecycle = this.lifecycle.then(step, step);
    return this.lifecycle;
  }

  private configurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (e.affectsConfiguration("sylk.serverPath")) {
      void this.restart();
      return;
    }
    if (e.affectsConfiguration(SECTION) && this.client?.isRunning()) {
      // The server answers by asking workspace/configuration for `sylk` (see the middleware).
      void this.client.sendNotification(DidChangeConfigurationNotification.type, {
        settings: { [SECTION]: this.serverSettings() },
      });
    }
  }

  private running(): LanguageClient | undefined {
    if (this.client?.isRunning()) {
      return this.client;
    }
    const why = this.error ?? "Sylk: the server is not running (open a folder, or run \"Sylk: Restart Server\").";
    void vscode.window.showErrorMessage(why);
    return undefined;
  }

  private async fetchStatus(): Promise<IndexStatus | undefined> {
    const client = this.client;
    if (client === undefined || !client.isRunning()) {
      return undefined;
    }
    try {
      const params: StatusParams = { skipped: "sample" };
      this.status = await client.sendRequest<IndexStatus>(STATUS_REQUEST, params);
    } catch (err) {
      this.output.appendLine(`Sylk: ${STATUS_REQUEST} failed: ${errorText(err)}`);
    }
    this.render();
    return this.status;
  }

  /** Ask for the index state soon, and again while the server works without reporting progress. */
  private scheduleRefresh(delayMs: number): void {
    if (this.refreshTimer !== undefined) {
      clearTimeout(this.refreshTimer);
    }
    this.refreshTimer = setTimeout(async () => {
      this.refreshTimer = undefined;
      const status = await this.fetchStatus();
      if (status === undefined || this.progress.current() !== undefined) {
        return; // the end of the running progress asks again
      }
      if (!status.ready || status.indexing || status.embedding) {
        this.scheduleRefresh(STATUS_REFRESH_MS / 10);
      } else if (status.semantic?.ready && (status.pending ?? 0) > 0) {
        this.scheduleRefresh(STATUS_REFRESH_MS); // a save embeds without progress
      }
    }, delayMs);
  }

  private render(): void {
    const view = statusBarView(this.progress.current(), this.status, this.error, vscode.workspace.isTrusted);
    this.statusItem.text = view.text;
    this.statusItem.tooltip = view.tooltip;
  }

  private search(): void {
    const client = this.running();
    if (client === undefined) {
      return;
    }
    const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration(SECTION);
    semanticSearch({
      search: (params, token) => client.sendRequest<AnySearchResult>(SEARCH_REQUEST, params, token),
      status: () => this.fetchStatus(),
      debounceMs: () => config().get<number>("quickSearch.debounceMs", 150),
      defaultMode: () => {
        const mode = config().get<string>("search.mode", "hybrid");
        return (SEARCH_MODES as readonly string[]).includes(mode) ? (mode as SearchMode) : "hybrid";
      },
      memento: this.context.workspaceState,
    });
  }

  private async reindex(): Promise<void> {
    const client = this.running();
    if (client === undefined) {
      return;
    }
    try {
      await client.sendRequest(ExecuteCommandRequest.type, { command: REINDEX_COMMAND, arguments: [] });
      this.scheduleRefresh(500);
    } catch (err) {
      void vscode.window.showErrorMessage(`Sylk: reindexing failed: ${errorText(err)}`);
    }
  }

  /** Delete the index and build it again from scratch (a corrupt or outgrown index), after asking. */
  private async clearIndex(): Promise<void> {
    const client = this.running();
    if (client === undefined) {
      return;
    }
    const clear = "Clear Index";
    const choice = await vscode.window.showWarningMessage(
      "Sylk: delete the index of this workspace and build it again from scratch?",
      { modal: true, detail: "Searching finds less until the new index is built." },
      clear,
    );
    if (choice !== clear) {
      return;
    }
    try {
      const answer = (await client.sendRequest(ExecuteCommandRequest.type, {
        command: CLEAR_INDEX_COMMAND,
        arguments: [],
      })) as ClearIndexResult;
      this.scheduleRefresh(0);
      const failed = answer.cleared.filter((c) => c.error !== null);
      if (failed.length > 0) {
        void vscode.window.showErrorMessage(
          `Sylk: clearing the index failed: ${failed.map((c) => `${c.root}: ${c.error}`).join("; ")}`,
        );
        return;
      }
      const removed = answer.cleared.map((c) => c.removed).filter((r): r is string => r !== null);
      void vscode.window.showInformationMessage(
        `Sylk: index cleared${removed.length > 0 ? ` (deleted ${removed.join(", ")})` : ""}; indexing again.`,
      );
    } catch (err) {
      void vscode.window.showErrorMessage(`Sylk: clearing the index failed: ${errorText(err)}`);
    }
  }

  private async showStatus(): Promise<void> {
    if (this.error !== undefined) {
      // asked for: shown again
      if (this.error.includes(INSTALL_COMMAND)) {
        this.showInstallHelp(this.error);
      } else {
        this.fail(this.error);
      }
      return;
    }
    if (this.running() === undefined) {
      return;
    }
    const status = await this.fetchStatus();
    if (status === undefined) {
      return;
    }
    const lines = describeStatus(status);
    lines.push(...restrictedLines(vscode.workspace.isTrusted, status));
    const activity = this.progress.current();
    if (activity !== undefined) {
      lines.unshift(`${activity.title}${activity.message ? `: ${activity.message}` : ""}`);
    }
    this.output.appendLine(`--- Sylk index status (${new Date().toLocaleString()}) ---`);
    lines.forEach((l) => this.output.appendLine(l));
    skippedLines(status).forEach((l) => this.output.appendLine(l));
    const choice = await vscode.window.showInformationMessage(
      `Sylk: ${lines[0]}`,
      { detail: lines.slice(1).join("\n") },
      "Details",
      "Reindex",
    );
    if (choice === "Details") {
      this.output.show(true);
    } else if (choice === "Reindex") {
      await this.reindex();
    }
  }

  dispose(): void {
    if (this.refreshTimer !== undefined) {
      clearTimeout(this.refreshTimer);
    }
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

function withCommandLinks(hover: vscode.Hover): vscode.Hover {
  const contents = hover.contents.map((c) => {
    if (!(c instanceof vscode.MarkdownString) || !c.value.includes("](sylk:")) {
      return c;
    }
    const md = new vscode.MarkdownString(commandLinks(c.value), c.supportThemeIcons);
    md.isTrusted = { enabledCommands: [OPEN_URI_COMMAND] };
    return md;
  });
  return new vscode.Hover(contents, hover.range);
}

async function openAt(uri: string, line: number): Promise<void> {
  const at = new vscode.Position(Math.max(0, line), 0);
  try {
    await vscode.window.showTextDocument(vscode.Uri.parse(uri), { selection: new vscode.Range(at, at) });
  } catch (err) {
    void vscode.window.showErrorMessage(`Sylk: cannot open ${uri}: ${errorText(err)}`);
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

let sylk: Sylk | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  sylk = new Sylk(context);
  context.subscriptions.push(sylk);
  await sylk.launch();
}

export async function deactivate(): Promise<void> {
  await sylk?.stop();
  sylk = undefined;
}
