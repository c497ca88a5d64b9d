// A minimal agent-memory client in Node.js: write the user's archival block,
// recall from it, and render a system prompt that uses it.
//
//   MEMORY_SERVER    host:port of the service (default 127.0.0.1:50051), as for
//                    every other client of agent-memory
//   MEMORY_API_KEY   an API key from `agent-memory keys create`; leave it unset
//                    only against a server started with --insecure-local
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import googleProtos from "google-proto-files";

const ADDRESS = process.env.MEMORY_SERVER || "127.0.0.1:50051";
const API_KEY = process.env.MEMORY_API_KEY || "";
const AGENT_ID = "node-example";
const QUERY = "where does the staging database live";
const ARCHIVE = [
  "The staging database lives in eu-west-1 and is rebuilt every Sunday night.",
  "Releases go out with `make release` from the main branch.",
  "Alice prefers answers that lead with the code.",
].join("\n");

// Load the repository's .proto files as they are: no generated code to keep in
// sync. They import google/api/annotations.proto (their HTTP routes), which the
// google-proto-files package carries. keepCase keeps the proto field names
// (agent_id, not agentId), and longs/enums as strings keep int64 timestamps exact
// and enums readable.
const here = path.dirname(fileURLToPath(import.meta.url));
const definition = protoLoader.loadSync(
  ["agentmemory/v1/block_service.proto", "agentmemory/v1/recall_service.proto"],
  {
    includeDirs: [path.resolve(here, "../../proto"), googleProtos.getProtoPath("..")],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  },
);
const { agentmemory } = grpc.loadPackageDefinition(definition);
const v1 = agentmemory.v1;

const credentials = grpc.credentials.createInsecure();
const blocks = new v1.BlockService(ADDRESS, credentials);
const recall = new v1.RecallService(ADDRESS, credentials);

// Every call carries the key; without one the server must be in local mode,
// where the tenant and user default to "default".
const metadata = new grpc.Metadata();
if (API_KEY) metadata.set("authorization", `Bearer ${API_KEY}`);

// A deadline on every call, so a hung server fails the script instead of hanging it.
const deadline = () => ({ deadline: Date.now() + 10_000 });

// grpc-js unary calls take a callback; wrap them so the flow reads top to bottom.
function unary(client, method, request) {
  return new Promise((resolve, reject) => {
    client[method](request, metadata, deadline(), (err, reply) =>
      err ? reject(err) : resolve(reply),
    );
  });
}

const ARCHIVAL_BLOCK = { label: "BLOCK_LABEL_ARCHIVAL", scope: "SCOPE_USER", agent_id: "" };

// WriteBlock is compare-and-set: with no expected_updated_at it only creates,
// and an existing block answers ABORTED. Then read the block and write again
// with the updated_at we read; if someone else wrote in between, that write
// is ABORTED too rather than silently overwriting theirs.
async function writeArchive() {
  try {
    const { block } = await unary(blocks, "WriteBlock", { ...ARCHIVAL_BLOCK, content: ARCHIVE });
    return { block, how: "created" };
  } catch (err) {
    if (err.code !== grpc.status.ABORTED) throw err;
  }
  const { block: current } = await unary(blocks, "GetBlock", ARCHIVAL_BLOCK);
  const { block } = await unary(blocks, "WriteBlock", {
    ...ARCHIVAL_BLOCK,
    content: ARCHIVE,
    expected_updated_at: current.updated_at,
  });
  return { block, how: "replaced" };
}

async function main() {
  const { block, how } = await writeArchive();
  console.log(`${how} USER archival block: version ${block.version}, ${block.entry_count} lines`);

  // Recall streams its matches, best first; a grpc-js stream is async-iterable.
  console.log(`\nrecall "${QUERY}":`);
  const request = { query: QUERY, agent_id: AGENT_ID, limit: 3 };
  const stream = recall.Recall(request, metadata, deadline());
  for await (const match of stream) {
    console.log(`  ${match.score.toFixed(3)}  line ${match.line_number}  ${match.content}`);
  }

  // In ARCHIVAL_MODE_AUTO the best archival matches for the user message come
  // back as hidden system reminders, beside the rendered system prompt.
  const rendered = await unary(recall, "RenderPrompt", {
    agent_id: AGENT_ID,
    persona: "You are a careful release engineer.",
    user_message: QUERY,
    memory_policy: { archival_mode: "ARCHIVAL_MODE_AUTO" },
  });
  console.log("\nsystem prompt:");
  console.log(rendered.system_prompt);
  console.log("\nsystem reminders:");
  for (const reminder of rendered.system_reminders) console.log(reminder);
  for (const warning of rendered.warnings) console.log(`warning: ${warning}`);
}

try {
  await main();
} catch (err) {
  if (err.code === undefined) throw err; // not a gRPC error: let Node report it
  console.error(`gRPC error: ${grpc.status[err.code]} (${err.code}): ${err.details}`);
  process.exitCode = 1;
} finally {
  blocks.close();
  recall.close();
}
