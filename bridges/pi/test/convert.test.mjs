// The MCP -> Pi conversions on their own, including servers that are not pi-tool-mcp
// (no `pi-tool/…` metadata). Node >= 22.18 runs the TypeScript source directly.
import { test } from "node:test";
import assert from "node:assert/strict";
import { errorText, piContent, piResult, piToolFields, piUpdate } from "../src/convert.ts";

const schema = { type: "object", properties: { q: { type: "string" } }, required: ["q"] };

test("a pi-tool-mcp listing gives every registerTool field", () => {
	const fields = piToolFields(
		{
			name: "get_weather",
			title: "Get weather",
			description: "Weather.",
			inputSchema: schema,
			_meta: {
				"pi-tool/promptSnippet": "Look up weather",
				"pi-tool/promptGuidelines": ["Use get_weather for weather."],
				"pi-tool/executionMode": "sequential",
			},
		},
		"rust_",
	);
	assert.deepEqual(fields, {
		name: "rust_get_weather",
		label: "Get weather",
		description: "Weather.",
		parameters: schema,
		promptSnippet: "Look up weather",
		promptGuidelines: ["Use get_weather for weather."],
		executionMode: "sequential",
	});
});

test("another server's listing falls back to the protocol's fields", () => {
	assert.deepEqual(piToolFields({ name: "search", inputSchema: schema, annotations: { title: "Search" } }), {
		name: "search",
		label: "Search",
		description: "",
		parameters: schema,
	});
	// Metadata of the wrong type is ignored, not trusted.
	const fields = piToolFields({ name: "x", inputSchema: schema, _meta: { "pi-tool/executionMode": "fast" } });
	assert.equal(fields.executionMode, undefined);
	assert.equal(fields.label, "x");
});

test("content: text and images pass through, MCP's other kinds become what pi-tool sends a model", () => {
	assert.deepEqual(
		piContent([
			{ type: "text", text: "hi" },
			{ type: "image", data: "AAA=", mimeType: "image/png" },
			{ type: "resource_link", uri: "file:///a", name: "a", description: "the a file" },
			{ type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
			{ type: "resource", resource: { uri: "test://r", mimeType: "text/plain", text: "hi" } },
			{ type: "resource", resource: { uri: "test://p", mimeType: "image/png", blob: "iVBO" } },
			{ type: "resource", resource: { uri: "test://z", blob: "AAAA" } },
			{ type: "future", x: 1 },
		]),
		[
			{ type: "text", text: "hi" },
			{ type: "image", data: "AAA=", mimeType: "image/png" },
			// The same texts as pi-tool's `Content::for_model` (pi-tool/src/content.rs).
			{ type: "text", text: "[resource link: a <file:///a>: the a file]" },
			{ type: "text", text: "[audio: audio/wav, 4 bytes, not shown to the model]" },
			{ type: "text", text: "[resource test://r]\nhi" },
			{ type: "image", data: "iVBO", mimeType: "image/png" },
			{ type: "text", text: "[resource test://z: application/octet-stream, 3 bytes, not shown to the model]" },
			{ type: "text", text: '{"type":"future","x":1}' },
		],
	);
});

test("progress: the partial result when the server sends one, else the message", () => {
	const partial = { content: [{ type: "text", text: "Checking Tokyo..." }], details: { phase: "lookup" } };
	assert.deepEqual(piUpdate({ progress: 1, message: "Checking Tokyo...", _meta: { "pi-tool/partialResult": partial } }), partial);
	assert.deepEqual(piUpdate({ progress: 1, message: "50%" }), { content: [{ type: "text", text: "50%" }], details: {} });
});

test("results: details and terminate from metadata, else structured content", () => {
	assert.deepEqual(
		piResult({
			content: [{ type: "text", text: "ok" }],
			_meta: { "pi-tool/details": { n: 1 }, "pi-tool/terminate": true },
		}),
		{ content: [{ type: "text", text: "ok" }], details: { n: 1 }, terminate: true },
	);
	assert.deepEqual(piResult({ content: [], structuredContent: { n: 2 } }), { content: [], details: { n: 2 } });
	// A structured result: the details are the structured content, unwrapped when marked.
	assert.deepEqual(
		piResult({ content: [], structuredContent: { result: [1, 2] }, _meta: { "pi-tool/wrappedResult": true } }),
		{ content: [], details: [1, 2] },
	);
	assert.deepEqual(
		piResult({ content: [], structuredContent: { result: null }, _meta: { "pi-tool/wrappedResult": true } }),
		{ content: [], details: null },
	);
	assert.deepEqual(piResult({ content: [], structuredContent: { result: 1 } }), { content: [], details: { result: 1 } });
	// No details key at all stays absent (Pi keeps absent and null apart).
	assert.ok(!("details" in piResult({ content: [] })));
	assert.equal(errorText({ content: [{ type: "text", text: "a" }, { type: "image", data: "", mimeType: "x" }, { type: "text", text: "b" }] }), "a\nb");
});
