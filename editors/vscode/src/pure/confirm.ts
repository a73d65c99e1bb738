// What the confirmation QuickPick says (pure, so it is unit-tested without a
// window): the question names the command line a bash call would run, and
// "Show change" is offered only for a change that can be shown as a diff.

/** How much of a command line the question shows. */
export const TITLE_COMMAND_CHARS = 200;

export interface ConfirmInput {
  tool: string;
  reason: string;
  preview?: Record<string, unknown>;
}

export interface ConfirmView {
  title: string;
  placeholder: string;
  canShowChange: boolean;
}

/** The QuickPick's title and placeholder, and whether "Show change" is offered. */
export function confirmView(p: ConfirmInput): ConfirmView {
  const pv = p.preview;
  let what = p.tool;
  if (pv?.kind === "command" && typeof pv.command === "string") {
    // One line: a QuickPick title is a single line.
    let cmd = pv.command.trim().replace(/\s*\n\s*/g, " ⏎ ");
    const chars = [...cmd];
    if (chars.length > TITLE_COMMAND_CHARS) cmd = chars.slice(0, TITLE_COMMAND_CHARS).join("") + "…";
    what = `${p.tool} \`${cmd}\``;
  }
  const edits = pv?.edits;
  const canShowChange = typeof pv?.uri === "string" && Array.isArray(edits) && edits.length > 0;
  return { title: `agentls: allow ${what}?`, placeholder: `${p.tool}: ${p.reason}`, canShowChange };
}
