// The service's HTTP/JSON API, as the panel uses it.
//
// Bodies and answers follow the proto JSON mapping: lowerCamelCase names,
// enums by name, timestamps as RFC 3339 strings, int64 as strings, and fields
// at their default value left out of answers.

const ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo";
const BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest";

/** A failed call, described by the google.rpc.Status JSON the server sent. */
export class ApiError extends Error {
  constructor({ httpStatus, code = 0, message, reason = "", metadata = {}, violations = [] }) {
    super(message);
    this.name = "ApiError";
    this.httpStatus = httpStatus;
    this.code = code;
    this.reason = reason;
    this.metadata = metadata;
    this.violations = violations;
  }

  get unauthenticated() {
    return this.httpStatus === 401;
  }
}

async function errorFrom(response) {
  let status = null;
  try {
    status = await response.json();
  } catch {
    // Not a Status body (a proxy's page, say): fall back to the HTTP status line.
  }
  if (!status || typeof status.message !== "string") {
    return new ApiError({
      httpStatus: response.status,
      message: `The server answered ${response.status} ${response.statusText}`.trim(),
    });
  }
  const details = Array.isArray(status.details) ? status.details : [];
  const info = details.find((d) => d["@type"] === ERROR_INFO) || {};
  const badRequest = details.find((d) => d["@type"] === BAD_REQUEST) || {};
  return new ApiError({
    httpStatus: response.status,
    code: status.code || 0,
    message: status.message,
    reason: info.reason || "",
    metadata: info.metadata || {},
    violations: (badRequest.fieldViolations || []).map((v) => ({
      field: v.field || "",
      description: v.description || "",
    })),
  });
}

function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

const segment = encodeURIComponent;

/** How many memories the panel asks for per page. */
export const MEMORY_PAGE_SIZE = 100;

/** The most records GetUsage returns (MAX_RECORDS in store/usage.py). */
export const USAGE_RECORD_LIMIT = 1000;

/** The path of an owner's memories: an agent's or a workspace's. */
function ownerPath(target) {
  const kind = target.kind === "workspace" ? "workspaces" : "agents";
  return `/v1/${kind}/${segment(target.id)}/memories`;
}

export class Api {
  /** @param {string} key the API key sent as a Bearer token */
  constructor(key) {
    this.key = key;
  }

  /** A server stream over HTTP: newline-delimited JSON, one message a line. */
  async stream(method, path, body) {
    const text = await this.call(method, path, body, {
      raw: true,
      accept: "application/x-ndjson",
    });
    const messages = [];
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      const message = JSON.parse(line);
      if (message.error) {
        const status = message.error;
        throw new ApiError({ httpStatus: 200, code: status.code || 0, message: status.message });
      }
      messages.push(message);
    }
    return messages;
  }

  async call(method, path, body, { raw = false, accept = "application/json" } = {}) {
    const headers = { Authorization: `Bearer ${this.key}`, Accept: accept };
    const init = { method, headers };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch {
      throw new ApiError({ httpStatus: 0, message: "The service could not be reached." });
    }
    if (!response.ok) throw await errorFrom(response);
    const text = await response.text();
    if (raw) return text;
    return text ? JSON.parse(text) : {};
  }

  // -- memories ---------------------------------------------------------------

  /**
   * One page of an owner's memories, in the server's order, that match `find`
   * ({ filter, orderBy, showSuperseded, showExpired }), with `totalSize`: how many
   * match across every page.
   */
  listMemories(target, pageToken = "", pageSize = MEMORY_PAGE_SIZE, find = {}) {
    const { filter = "", orderBy = "", showSuperseded = false, showExpired = false } = find;
    const params = {
      pageSize,
      pageToken,
      filter,
      orderBy,
      showSuperseded: showSuperseded || "",
      showExpired: showExpired || "",
    };
    return this.call("GET", ownerPath(target) + query(params));
  }

  /** A memory's audit trail, oldest first (AIP-158 pages). */
  memoryEvents(id, pageToken = "") {
    return this.call("GET", `/v1/memories/${segment(id)}/events` + query({ pageToken }));
  }

  /** The conversation snapshot a memory was memorized from. */
  getConversation(provider, conversationId) {
    return this.call("GET", `/v1/conversations/${segment(provider)}/${segment(conversationId)}`);
  }

  /** Set (an RFC 3339 instant) or clear (empty) a memory's expiry, if unchanged. */
  setMemoryExpiry(memory, expireTime) {
    const path = `/v1/memories/${segment(memory.id)}`;
    const mask = query({ updateMask: "expire_time", etag: memory.etag });
    const body = expireTime ? { id: memory.id, expireTime } : { id: memory.id };
    return this.call("PATCH", path + mask, body);
  }

  /**
   * The system-prompt part an agent would get now, for a user message; with
   * `asOfTime` (a run's renderTime), the one it got then.
   */
  renderPrompt(agentId, userMessage, { asOfTime = "", countTokens = true } = {}) {
    const body = { userMessage, countTokens };
    if (asOfTime) body.asOfTime = asOfTime;
    return this.call("POST", `/v1/agents/${segment(agentId)}:renderPrompt`, body);
  }

  /** Archival lines and memories of an agent that match `query`, with scores. */
  recall(agentId, queryText, { limit = 10, includeMemories = true } = {}) {
    const body = { agentId, query: queryText, limit, includeMemories };
    return this.stream("POST", "/v1/recall", body);
  }

  /** Only creates: a key that holds a memory already is refused (KEY_TAKEN). */
  createMemory(target, { key, value, importance, pinned }) {
    const body = { key, value, importance, pinned, createOnly: true };
    return this.call("POST", ownerPath(target), body);
  }

  getMemory(id) {
    return this.call("GET", `/v1/memories/${segment(id)}`);
  }

  /** The tenant's agents and workspaces, a page of each, with their memory counts. */
  async listOwners(pageSize = 50) {
    const [agents, workspaces] = await Promise.all([
      this.call("GET", "/v1/agents" + query({ pageSize })),
      this.call("GET", "/v1/workspaces" + query({ pageSize })),
    ]);
    return {
      agents: agents.agents || [],
      workspaces: workspaces.workspaces || [],
      more: Boolean(agents.nextPageToken || workspaces.nextPageToken),
    };
  }

  /** Who the key stands for: tenant, user, role and key id. */
  getCaller() {
    return this.call("GET", "/v1/caller");
  }

  updateMemory(memory, { value, importance }) {
    const path = `/v1/memories/${segment(memory.id)}`;
    const mask = query({ updateMask: "value,importance", etag: memory.etag });
    return this.call("PATCH", path + mask, { id: memory.id, value, importance });
  }

  /** Let a memory held for review reach prompts and recall again (or hold it). */
  holdMemory(memory, held) {
    const path = `/v1/memories/${segment(memory.id)}`;
    const mask = query({ updateMask: "held_for_review", etag: memory.etag });
    return this.call("PATCH", path + mask, { id: memory.id, heldForReview: held });
  }

  pinMemory(id, pinned) {
    return this.call("POST", `/v1/memories/${segment(id)}:pin`, { pinned });
  }

  deleteMemory(id) {
    return this.call("DELETE", `/v1/memories/${segment(id)}`);
  }

  // -- blocks -----------------------------------------------------------------

  /**
   * The user's blocks, with an agent's too; `userId` (an orchestrator's) another user's.
   * With `workspaceId`, the workspace's blocks (the tenant's, whoever reads them) too.
   */
  async listBlocks(agentId, userId = "", workspaceId = "") {
    const filter = agentId ? { agentId } : { scopeFilter: "BLOCK_SCOPE_FILTER_USER" };
    const own = this.call("GET", "/v1/blocks" + query({ ...filter, userId }));
    if (!workspaceId) return own;
    const [mine, shared] = await Promise.all([
      own,
      this.call("GET", `/v1/workspaces/${segment(workspaceId)}/blocks`),
    ]);
    return { blocks: [...(shared.blocks || []), ...(mine.blocks || [])] };
  }

  /** Where a block's routes are: under its workspace, or the caller's own. */
  blockPath({ label, workspaceId = "" }) {
    const under = workspaceId ? `/v1/workspaces/${segment(workspaceId)}` : "/v1";
    return `${under}/blocks/${segment(label)}`;
  }

  getBlock({ label, scope, agentId, userId = "", workspaceId = "" }) {
    const params = workspaceId ? {} : { scope, agentId, userId };
    return this.call("GET", this.blockPath({ label, workspaceId }) + query(params));
  }

  /** Compare-and-set: expectedUpdatedAt empty means "create, only if absent". */
  writeBlock({ label, scope, agentId, workspaceId = "", content, expectedUpdatedAt }) {
    const body = workspaceId ? { content } : { scope, content };
    if (agentId) body.agentId = agentId;
    if (expectedUpdatedAt) body.expectedUpdatedAt = expectedUpdatedAt;
    return this.call("POST", this.blockPath({ label, workspaceId }) + ":write", body);
  }

  /** A block's kept versions, newest first (a page of them). */
  blockVersions({ label, scope, agentId, userId = "", workspaceId = "" }, pageSize = 20) {
    const params = workspaceId ? { pageSize } : { scope, agentId, pageSize, userId };
    return this.call("GET", this.blockPath({ label, workspaceId }) + "/versions" + query(params));
  }

  /** How the server ranks recall: by words, or by words and meaning. */
  recallStatus() {
    return this.call("GET", "/v1/recallStatus");
  }

  // -- active session and decisions ---------------------------------------------

  activeSession(agentId) {
    return this.call("GET", `/v1/agents/${segment(agentId)}/activeSession`);
  }

  /**
   * The agent's recorded runs, newest first: kind, session ids before and after, and
   * when its prompt was rendered (renderTime), when the orchestrator said.
   */
  agentRuns(agentId, pageSize = 10) {
    return this.call("GET", `/v1/agents/${segment(agentId)}/runs` + query({ pageSize }));
  }

  resetActiveSession(agentId) {
    return this.call("POST", `/v1/agents/${segment(agentId)}/activeSession:reset`, {});
  }

  recentDecisions(agentId, limit = 10) {
    const path = `/v1/agents/${segment(agentId)}/decisions`;
    return this.call("GET", path + query({ limit, includeResult: true }));
  }

  reexaminations(decisionId) {
    return this.call("GET", `/v1/decisions/${segment(decisionId)}/reexaminations`);
  }

  // -- usage ------------------------------------------------------------------

  /**
   * Extraction passes recorded at or after `since` (a Date), oldest first. The
   * server returns at most USAGE_RECORD_LIMIT records; its totals cover every
   * pass in the window, returned or not.
   */
  extractionUsage(since) {
    const params = { syntheticSessionIdPrefix: "memory-extract:", startTime: since.toISOString() };
    return this.call("GET", "/v1/usage" + query(params));
  }
}
