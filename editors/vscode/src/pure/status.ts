// The status bar item's text and tooltip for the sidecar's state (pure, so
// every state is unit-tested without a window).

export interface StatusInput {
  state: string; // the sidecar's: "stopped" | "starting" | "ready" | "failed"
  running: number; // tool calls in flight
  watcher?: string; // the initialize result's watcher mode
  binaryPath?: string;
  sandbox?: SandboxStatus; // the initialize result's sandbox status
}

/** The initialize result's experimental.agentls.sandbox. */
export interface SandboxStatus {
  enabled?: boolean;
  active?: boolean;
  reason?: string;
  failIfUnavailable?: boolean;
}

export interface StatusView {
  text: string;
  tooltip: string;
}

/** What the status bar shows: starting, ready, watcher degraded, running N tools, failed or stopped. */
export function statusView(s: StatusInput): StatusView {
  let text = "$(circle-slash) agentls";
  let tip = "agentls is stopped";
  if (s.state === "starting") [text, tip] = ["$(sync~spin) agentls", "agentls is starting"];
  else if (s.state === "failed") [text, tip] = ["$(error) agentls", "agentls is not available: see the log"];
  else if (s.state === "ready" && s.running > 0) [text, tip] = [`$(loading~spin) agentls: ${s.running} running`, `agentls is running ${s.running} tool${s.running === 1 ? "" : "s"}`];
  else if (s.state === "ready" && s.watcher === "degraded") [text, tip] = ["$(warning) agentls: watcher degraded", "agentls cannot watch files: external changes may go unnoticed"];
  else if (s.state === "ready") [text, tip] = ["$(check) agentls", `agentls is ready (${s.binaryPath ?? ""})`];
  const idle = s.state === "ready" && s.running === 0;
  if (idle && s.sandbox?.enabled && !s.sandbox.active) {
    text = "$(warning) agentls: sandbox off";
    tip = `the sandbox is enabled but off: ${s.sandbox.reason ?? "unknown reason"}${s.sandbox.failIfUnavailable ? " (failIfUnavailable: bash runs no command)" : " (commands run unsandboxed)"}`;
  } else if (idle && s.sandbox?.active) tip += "; bash commands run sandboxed";
  return { text, tooltip: tip + " — click to show the log" };
}
