#!/usr/bin/env node
// Generates pi-tool/tests/data/transform/vectors.json: pi-ai 0.85.0's transformMessages on
// one transcript for a text-only model (with a tool-call id normaliser) and for a vision
// model (without one), for the test in pi-tool/src/providers/transform.rs.
//
// Usage: node scripts/gen-transform-vectors.mjs NODE_MODULES_DIR
// where NODE_MODULES_DIR holds @earendil-works/pi-ai, e.g. /tmp/pc/node_modules.
// Synthetic tool results carry Date.now(); it is written as 0.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [nodeModules] = process.argv.slice(2);
if (!nodeModules) {
	console.error("usage: node scripts/gen-transform-vectors.mjs NODE_MODULES_DIR");
	process.exit(2);
}
const { transformMessages } = await import(
	pathToFileURL(path.join(nodeModules, "@earendil-works", "pi-ai", "dist", "api", "transform-messages.js")).href
);
const usage = { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const a = (model, content, stopReason = "toolUse", extra = {}) => ({ role: "assistant", content, api: "openai-responses", provider: "openai", model, usage, stopReason, timestamp: 5, ...extra });
const img = { type: "image", data: "aGk=", mimeType: "image/png" };
const PH = "(image omitted: model does not support images)";
const messages = [
  { role: "user", content: [{ type: "text", text: "look" }, img, img, { type: "text", text: PH }, img, { type: "text", text: "end" }, img], timestamp: 1 },
  { role: "user", content: "plain", timestamp: 2 },
  a("gpt-5", [
    { type: "thinking", thinking: "secret", thinkingSignature: "sig", redacted: true },
    { type: "thinking", thinking: "reasoned", thinkingSignature: "{\"id\":\"rs_1\"}" },
    { type: "thinking", thinking: "   \n" },
    { type: "thinking", thinking: "", thinkingSignature: "enc" },
    { type: "text", text: "answer", textSignature: "msg_1" },
    { type: "toolCall", id: "call_1|fc_abc+/=", name: "read", arguments: { path: "a" }, thoughtSignature: "ts" },
    { type: "toolCall", id: "plain", name: "grep", arguments: {} },
    { type: "toolCall", id: "call_3|fc_x", name: "ls", arguments: {} },
  ]),
  { role: "toolResult", toolCallId: "call_1|fc_abc+/=", toolName: "read", content: [{ type: "text", text: "data" }, img], isError: false, timestamp: 6 },
  { role: "toolResult", toolCallId: "plain", toolName: "grep", content: [img, img], isError: false, timestamp: 7 },
  a("claude-x", [{ type: "thinking", thinking: "mine", thinkingSignature: "s", redacted: true }, { type: "thinking", thinking: "", thinkingSignature: "keep" }, { type: "thinking", thinking: " " }, { type: "text", text: "t", textSignature: "ts" }, { type: "toolCall", id: "tc_9", name: "read", arguments: {}, thoughtSignature: "keepme" }], "toolUse", { api: "anthropic-messages", provider: "anthropic" }),
  a("gpt-5", [{ type: "toolCall", id: "err_1", name: "x", arguments: {} }], "error", { errorMessage: "boom" }),
  { role: "user", content: [{ type: "text", text: "next" }], timestamp: 9 },
  a("gpt-5", [{ type: "text", text: "done" }, { type: "toolCall", id: "orphan|end", name: "w", arguments: { a: 1 } }], "toolUse"),
];
const model = { id: "claude-x", api: "anthropic-messages", provider: "anthropic", input: ["text"] };
const normalize = (id) => id.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 12);
const out = transformMessages(messages, model, normalize);
for (const m of out) if (m.role === "toolResult" && m.timestamp > 1000) m.timestamp = 0;
const vision = transformMessages(messages, { ...model, input: ["text", "image"] }, undefined);
for (const m of vision) if (m.role === "toolResult" && m.timestamp > 1000) m.timestamp = 0;
const here = path.dirname(fileURLToPath(import.meta.url));
const file = path.join(here, "..", "pi-tool", "tests", "data", "transform", "vectors.json");
writeFileSync(file, `${JSON.stringify({ messages, textOnly: out, vision }, null, 1)}\n`);
console.error(`wrote ${file}`);
