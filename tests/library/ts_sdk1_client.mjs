// The official TypeScript SDK v1 client (@modelcontextprotocol/sdk 1.x, protocol 2025-11-25)
// against a kit server that serves both eras: `node ts_sdk1_client.mjs URL SCENARIO` over
// Streamable HTTP, or `node ts_sdk1_client.mjs stdio SCENARIO '{"command": ..., "args": [...],
// "env": {...}, "cwd": ...}'` over stdio (the SDK's StdioClientTransport starts the server as its
// child), with MRTR_TS_SDK1_DIR naming the folder whose node_modules holds the SDK (.ts-sdk1/
// by default, made by .ci/run's "ts sdk v1 client" stage).
//
// Run by test_era2025_clients_on_serve.py with Node 22. It answers the server's pushed
// requests with the SDK's own request handlers (elicitation/create, sampling/createMessage,
// roots/list) and prints one JSON line: the negotiated version, the tool result's text,
// isError, and the methods the server pushed, in order.

import { createRequire } from "node:module";
import path from "node:path";

// The SDK lives outside this folder: resolve it from the install folder, not from this file.
const folder = process.env.MRTR_TS_SDK1_DIR ?? path.resolve(import.meta.dirname, "../../.ts-sdk1");
const require = createRequire(path.join(folder, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require(
  "@modelcontextprotocol/sdk/client/streamableHttp.js",
);
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} = require("@modelcontextprotocol/sdk/types.js");

const [url, scenario, spawn] = process.argv.slice(2);
const pushed = []; // the server-to-client requests, in the order they came

function answerForm(request) {
  pushed.push(request.method);
  if (scenario === "decline") return { action: "decline" };
  const fields = Object.keys(request.params.requestedSchema?.properties ?? {});
  if (fields.includes("login")) return { action: "accept", content: { login: "ann" } };
  return { action: "accept", content: { city: "Lyon", nights: 3 } };
}

const capabilities = { sampling: {}, roots: {} };
if (scenario !== "no_elicitation") capabilities.elicitation = { form: {} };
const client = new Client({ name: "ts-sdk1-interop", version: "0" }, { capabilities });
if (capabilities.elicitation) client.setRequestHandler(ElicitRequestSchema, answerForm);
client.setRequestHandler(CreateMessageRequestSchema, (request) => {
  pushed.push(request.method);
  return { role: "assistant", content: { type: "text", text: "Lyon in spring" }, model: "stand-in" };
});
client.setRequestHandler(ListRootsRequestSchema, (request) => {
  pushed.push(request.method);
  return { roots: [{ uri: "file:///home/ann/trips", name: "trips" }] };
});

const transport =
  url === "stdio"
    ? new StdioClientTransport(JSON.parse(spawn))
    : new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: "Bearer token-ann" } },
      });
// The version initialize agreed on, as the client hands it to its transport.
let negotiated;
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (version) => {
  negotiated = version;
  setVersion?.(version);
};
await client.connect(transport);
const [tool, args] =
  scenario === "three_rounds" ? ["plan_trip", {}] : ["get_weather", { city: "Oslo" }];
const result = await client.callTool({ name: tool, arguments: args });
const report = {
  protocolVersion: negotiated,
  sessionId: Boolean(transport.sessionId),
  text: result.content?.[0]?.text ?? "",
  isError: Boolean(result.isError),
  pushed,
};
if (transport.sessionId) await transport.terminateSession(); // DELETE: the session ends too
await client.close();
console.log(JSON.stringify(report));
