// Texts for the follow-along mark.

/** The hover on the agent's line: what the agent is doing there, by tool kind. */
export function followHover(kind: string | undefined): string {
  switch (kind) {
    case "read":
      return "$(eye) agent is reading";
    case "edit":
      return "$(edit) agent is editing";
    case "delete":
      return "$(trash) agent is deleting";
    case "move":
      return "$(arrow-swap) agent is moving this file";
    case "search":
      return "$(search) agent is searching";
    case "execute":
      return "$(terminal) agent is running a command";
    default:
      return "$(hubot) agent is working here";
  }
}
