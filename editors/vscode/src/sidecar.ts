// The agentls process and its JSON-RPC connection (vscode-languageclient;
// agentls is not a language server: the document selector only syncs open
// files when agentls.syncOpenFiles is on, and no language feature is used).
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
  State,
} from "vscode-languageclient/node";
import { resolveBinary } from "./pure/binary";
import type { SandboxStatus } from "./pure/status";
import { DESCRIBED_LIMITS } from "./pure/limits";
import { applyWorkspaceEdit, type ApplyEditParams } from "./editorEdits";
import type { DiagnosticsParams, DiagnosticsResult } from "./diagnostics";
import { type ClientCapabilities, initializationOptions, restartDelay, syncChoice, TOOL_PREFIX } from "./pure/settings";
import type { PrepareResult } from "./pure/approvals";

/** JSON-RPC's "method not found". */
const METHOD_NOT_FOUND = -32601;

export type SidecarState = "stopped" | "starting" | "ready" | "failed";

export interface ToolResult {
  callId: string;
  content: Array<{ type: "text"; text: string } | { type: "image"; data: string; mimeType: string }>;
  isError: boolean;
  details?: Record<string, unknown>;
}

/** A client feature announcing capabilities.experimental.agentls. */
function agentlsCapabilities(agentls: ClientCapabilities & { diagnostics: boolean }): StaticFeature {
  return {
    fillClientCapabilities(caps) {
      caps.experimental = { ...(caps.experimental as object | undefined), agentls: { ...agentls } };
    },
    getState: () => ({ kind: "static" }),
    initialize() {},
    clear() {},
  };
}

export interface Handlers {
  onProgress(p: { callId: string; tool: string; message?: string; output?: string; percentage?: number }): void;
  onDetails(p: { callId: string; tool: string; details: Record<string, unknown> }): void;
  onConfirm(p: ConfirmParams, token: vscode.CancellationToken): Promise<ConfirmResult>;
  onDiagnostics(p: DiagnosticsParams, token: vscode.CancellationToken): Promise<DiagnosticsResult>;
  /** jobs/changed: a background job started or ended. */
  onJobChanged?(p: { job: string; status: string; command: string }): void;
}

export interface ConfirmParams {
  callId: string;
  tool: string;
  arguments: Record<string, unknown>;
  reason: string;
  preview?: Record<string, unknown>;
}
export interface ConfirmResult {
  decision: "allowOnce" | "allowAlways" | "rejectOnce" | "rejectAlways";
  message?: string;
}

export class Sidecar implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private _state: SidecarState = "stopped";
  private attempt = 0;
  private healthyTimer: NodeJS.Timeout | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private notifiedMissing = "";
  private nextCall = 0;
  private editQueue: Promise<void> = Promise.resolve();
  /** The client whose agentls answered tools/prepare with MethodNotFound. */
  private noPrepare: LanguageClient | undefined;
  private readonly stateEmitter = new vscode.EventEmitter<SidecarState>();
  readonly onState = this.stateEmitter.event;
  binaryPath: string | undefined;
  watcher: string | undefined;
  sandbox: SandboxStatus | undefined;

  constructor(
    private readonly ctx: vscode.ExtensionContext,
    readonly output: vscode.OutputChannel,
    private readonly handlers: Handlers,
  ) {}

  get state(): SidecarState {
    return this._state;
  }

  private setState(s: SidecarState): void {
    this._state = s;
    this.stateEmitter.fire(s);
  }

  /** Starts the sidecar; resolves once it is ready or has failed. */
  async start(): Promise<void> {
    this.stopping = false;
    const cfg = vscode.workspace.getConfiguration("agentls");
    const bin = resolveBinary({
      configured: cfg.get<string>("path"),
      extensionDir: this.ctx.extensionPath,
      platform: process.platform,
      arch: process.arch,
      pathEnv: process.env.PATH,
      isExecutable: (f) => {
        try {
          fs.accessSync(f, fs.constants.X_OK);
          return fs.statSync(f).isFile();
        } catch {
          return false;
        }
      },
      join: path.join,
      pathDelimiter: path.delimiter,
    });
    if (!bin.ok) {
      this.output.appendLine(`[agentls] ${bin.message} Tried: ${bin.tried.join(", ")}`);
      this.setState("failed");
      if (this.notifiedMissing !== bin.message) {
        this.notifiedMissing = bin.message;
        void vscode.window.showErrorMessage(bin.message, "Configure path").then((pick) => {
          if (pick) void vscode.commands.executeCommand("workbench.action.openSettings", "agentls.path");
        });
      }
      return;
    }
    this.notifiedMissing = "";
    this.binaryPath = bin.path;
    const { options: fromSettings, warnings } = initializationOptions({
      mode: cfg.get("mode"),
      permissions: cfg.get("permissions"),
      // The limits package.json's descriptions state: VS Code gives the
      // model those fixed descriptions, so the numbers must not change.
      limits: DESCRIBED_LIMITS,
    });
    const options = { ...fromSettings, toolNamePrefix: TOOL_PREFIX };
    for (const w of warnings) this.output.appendLine(`[agentls] settings: ${w}`);
    const sync = syncChoice(cfg.get("syncOpenFiles"), (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath));
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    // No transport field: stdio without the "--stdio" argument agentls does not take.
    const serverOptions: ServerOptions = {
      command: bin.path,
      args: ["--log-level", cfg.get<string>("trace.server") === "verbose" ? "debug" : "info"],
      options: { cwd: folder },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: sync.documentSelector,
      outputChannel: this.output,
      initializationOptions: options,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          if (!this.stopping) this.scheduleRestart();
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    const client = new LanguageClient("agentls", "agentls", serverOptions, clientOptions);
    // agentls.diagnostics: only an explicit false turns it off (default true).
    const diagnostics = cfg.get("diagnostics") !== false;
    client.registerFeature(agentlsCapabilities({ ...sync.capabilities, diagnostics }));
    // Installed after languageclient's own workspace/applyEdit handler when
    // the connection starts, so it replaces it. One edit at a time: each
    // decides what to save from the dirty state the previous one left.
    client.onRequest("workspace/applyEdit", (p: ApplyEditParams) => {
      const next = this.editQueue.then(() => applyWorkspaceEdit(client, p, (s) => this.output.appendLine(s)));
      this.editQueue = next.then(() => undefined);
      return next;
    });
    // The watchers arm after initialize (whose capability says "starting");
    // agentls/watcherReady names the mode, again after each re-arming.
    this.watcher = undefined;
    client.onNotification("agentls/watcherReady", (p: { watcher?: string }) => {
      if (this.client !== client) return;
      this.watcher = p.watcher;
      this.stateEmitter.fire(this._state);
    });
    this.client = client;
    this.setState("starting");
    this.output.appendLine(`[agentls] starting ${bin.path} (${bin.source}) with ${JSON.stringify(options)}; open files ${sync.capabilities.applyEdit ? "synced" : "not synced"}; diagnostics ${diagnostics ? "on" : "off"}`);
    try {
      await client.start();
    } catch (err) {
      this.output.appendLine(`[agentls] start failed: ${String(err)}`);
      if (this.client === client && !this.stopping) this.scheduleRestart();
      return;
    }
    if (this.client !== client) return;
    client.onNotification("tools/progress", (p) => this.handlers.onProgress(p));
    client.onNotification("tools/details", (p) => this.handlers.onDetails(p));
    client.onNotification("tools/listChanged", () => this.output.appendLine("[agentls] tool list changed"));
    client.onNotification("jobs/changed", (p) => this.handlers.onJobChanged?.(p));
    client.onRequest("tools/confirm", (p: ConfirmParams, token) => this.handlers.onConfirm(p, token));
    client.onRequest("tools/diagnostics", (p: DiagnosticsParams, token) => this.handlers.onDiagnostics(p, token));
    client.onDidChangeState((e) => {
      if (e.newState === State.Stopped && this.client === client && !this.stopping) this.setState("starting");
    });
    const exp = (client.initializeResult?.capabilities as { experimental?: { agentls?: { watcher?: string; sandbox?: SandboxStatus } } })?.experimental?.agentls;
    this.watcher ??= exp?.watcher;
    this.sandbox = exp?.sandbox;
    this.setState("ready");
    clearTimeout(this.healthyTimer);
    this.healthyTimer = setTimeout(() => (this.attempt = 0), 60_000);
  }

  private scheduleRestart(): void {
    clearTimeout(this.healthyTimer);
    clearTimeout(this.restartTimer);
    const delay = restartDelay(this.attempt++);
    this.output.appendLine(`[agentls] the sidecar stopped; restarting in ${delay} ms`);
    this.setState("starting");
    this.restartTimer = setTimeout(() => {
      const old = this.client;
      this.client = undefined;
      void old?.dispose().catch(() => undefined);
      void this.start();
    }, delay);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    clearTimeout(this.healthyTimer);
    const c = this.client;
    this.client = undefined;
    if (c) {
      try {
        await c.stop(2000);
      } catch (err) {
        this.output.appendLine(`[agentls] stop: ${String(err)}`);
      }
    }
    this.setState("stopped");
  }

  async restart(): Promise<void> {
    await this.stop();
    this.attempt = 0;
    await this.start();
  }

  /** Waits (up to timeoutMs) until the sidecar is ready. */
  async ready(timeoutMs = 15_000): Promise<LanguageClient> {
    const deadline = Date.now() + timeoutMs;
    while (this._state !== "ready" || !this.client) {
      if (this._state === "failed") throw new Error("agentls is not available (see the agentls log)");
      if (Date.now() > deadline) throw new Error(`agentls did not become ready within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return this.client;
  }

  newCallId(): string {
    return `vscode-${++this.nextCall}`;
  }

  /**
   * tools/call. approved is a tools/prepare token: the user already approved
   * this call in VS Code's confirmation, so agentls does not ask again.
   */
  async call(name: string, args: unknown, token?: vscode.CancellationToken, callId = this.newCallId(), approved?: string): Promise<ToolResult> {
    const client = await this.ready();
    const params: Record<string, unknown> = { name, arguments: args ?? {}, callId };
    if (approved) params.approved = approved;
    return token ? client.sendRequest<ToolResult>("tools/call", params, token) : client.sendRequest<ToolResult>("tools/call", params);
  }

  /**
   * tools/prepare: what the call needs (allow, ask, deny, fail), nothing
   * run. undefined when this agentls has no tools/prepare (an older binary
   * answers MethodNotFound; asked once per process) or the request failed:
   * the call then goes as without it, agentls asking through tools/confirm.
   */
  async prepare(name: string, args: unknown, token?: vscode.CancellationToken): Promise<PrepareResult | undefined> {
    const client = await this.ready();
    if (this.noPrepare === client) return undefined;
    try {
      // An undefined token would be sent as a second parameter (params then
      // become an array): pass one only when there is one.
      const params = { name, arguments: args ?? {} };
      return await (token ? client.sendRequest<PrepareResult>("tools/prepare", params, token) : client.sendRequest<PrepareResult>("tools/prepare", params));
    } catch (err) {
      if ((err as { code?: number })?.code === METHOD_NOT_FOUND) {
        this.noPrepare = client;
        this.output.appendLine("[agentls] this agentls has no tools/prepare: agentls asks its own questions (update the binary for VS Code's confirmations)");
      } else if (!token?.isCancellationRequested) {
        this.output.appendLine(`[agentls] tools/prepare ${name}: ${String(err)}; agentls asks its own question instead`);
      }
      return undefined;
    }
  }

  /** A request of the agentls protocol other than tools/call (jobs/output, …). */
  async request<T>(method: string, params: unknown): Promise<T> {
    const client = await this.ready();
    return client.sendRequest<T>(method, params);
  }

  async listTools(format = "vscode"): Promise<unknown[]> {
    const client = await this.ready();
    const r = await client.sendRequest<{ tools: unknown[] }>("tools/list", { format });
    return r.tools;
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
  }
}
