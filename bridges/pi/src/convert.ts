// Between MCP's shapes and Pi's: listed tools to `pi.registerTool` fields, progress
// notifications to `onUpdate` payloads, call results to Pi tool results.
//
// pi-tool-mcp servers put Pi's host-only fields into `_meta` under `pi-tool/…` keys
// (prompt snippet, guidelines, execution mode, result details, the whole partial
// result of an update). Other MCP servers work too: the bridge falls back to what the
// protocol itself carries.

/** A tool as `tools/list` gives it (the fields the bridge reads). */
export interface ListedTool {
	name: string;
	title?: string;
	description?: string;
	inputSchema: Record<string, unknown>;
	annotations?: { title?: string };
	_meta?: Record<string, unknown>;
}

/** One content block of an MCP result (the fields the bridge reads). */
export interface McpContent {
	type: string;
	text?: string;
	data?: string;
	mimeType?: string;
	[key: string]: unknown;
}

/** Pi's content blocks. */
export type PiContent = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

/** What `onUpdate` and `execute` hand back to Pi. */
export interface PiToolResult {
	content: PiContent[];
	details?: unknown;
	terminate?: boolean;
}

/** The `pi.registerTool` fields that come from the listing (everything but execute). */
export interface PiToolFields {
	name: string;
	label: string;
	description: string;
	parameters: Record<string, unknown>;
	promptSnippet?: string;
	promptGuidelines?: string[];
	executionMode?: "sequential" | "parallel";
}

const META = "pi-tool/";

function meta(object: { _meta?: unknown } | undefined, key: string): unknown {
	const bag = object?._meta;
	return bag && typeof bag === "object" ? (bag as Record<string, unknown>)[META + key] : undefined;
}

/** The registration fields of a listed tool, its name prefixed with `prefix`. */
export function piToolFields(tool: ListedTool, prefix = ""): PiToolFields {
	const fields: PiToolFields = {
		name: prefix + tool.name,
		label: tool.title ?? tool.annotations?.title ?? tool.name,
		description: tool.description ?? "",
		// Plain JSON Schema: Pi validates (and coerces) arguments against it before execute.
		parameters: tool.inputSchema,
	};
	const snippet = meta(tool, "promptSnippet");
	if (typeof snippet === "string") fields.promptSnippet = snippet;
	const guidelines = meta(tool, "promptGuidelines");
	if (Array.isArray(guidelines) && guidelines.every((g) => typeof g === "string")) {
		fields.promptGuidelines = guidelines;
	}
	const mode = meta(tool, "executionMode");
	if (mode === "sequential" || mode === "parallel") fields.executionMode = mode;
	return fields;
}

/** The number of bytes base64 text decodes to (padding aside). */
function base64Bytes(data: string): number {
	return Math.floor((data.replace(/[\s=]/g, "").length * 3) / 4);
}

/**
 * Pi content for MCP content. Pi has text and images only, so the other kinds become what
 * pi-tool's `Content::for_model` makes of them, word for word: an embedded `image/*` blob
 * the image, embedded text its text under its URI, a resource link its name and URI,
 * audio and other bytes their type and size. A kind MCP does not define is shown as its
 * JSON.
 */
export function piContent(blocks: McpContent[] | undefined): PiContent[] {
	return (blocks ?? []).map((block): PiContent => {
		if (block.type === "text" && typeof block.text === "string") return { type: "text", text: block.text };
		if (block.type === "image" && typeof block.data === "string" && typeof block.mimeType === "string") {
			return { type: "image", data: block.data, mimeType: block.mimeType };
		}
		if (block.type === "audio" && typeof block.data === "string" && typeof block.mimeType === "string") {
			return { type: "text", text: `[audio: ${block.mimeType}, ${base64Bytes(block.data)} bytes, not shown to the model]` };
		}
		if (block.type === "resource_link" && typeof block.uri === "string" && typeof block.name === "string") {
			let text = `[resource link: ${block.name} <${block.uri}>`;
			if (typeof block.mimeType === "string") text += ` (${block.mimeType})`;
			if (typeof block.description === "string") text += `: ${block.description}`;
			return { type: "text", text: `${text}]` };
		}
		const resource = block.resource as { uri?: unknown; mimeType?: unknown; text?: unknown; blob?: unknown } | undefined;
		if (block.type === "resource" && resource && typeof resource.uri === "string") {
			const mimeType = typeof resource.mimeType === "string" ? resource.mimeType : undefined;
			if (typeof resource.text === "string") return { type: "text", text: `[resource ${resource.uri}]\n${resource.text}` };
			if (typeof resource.blob === "string") {
				if (mimeType?.startsWith("image/")) return { type: "image", data: resource.blob, mimeType };
				return {
					type: "text",
					text: `[resource ${resource.uri}: ${mimeType ?? "application/octet-stream"}, ${base64Bytes(resource.blob)} bytes, not shown to the model]`,
				};
			}
		}
		return { type: "text", text: JSON.stringify(block) };
	});
}

/** The `onUpdate` payload of a `notifications/progress`. */
export function piUpdate(progress: { message?: string; _meta?: unknown }): PiToolResult {
	const partial = meta(progress, "partialResult") as { content?: McpContent[]; details?: unknown } | undefined;
	if (partial && typeof partial === "object" && Array.isArray(partial.content)) {
		const update: PiToolResult = { content: piContent(partial.content) };
		if ("details" in partial) update.details = partial.details;
		return update;
	}
	return { content: progress.message ? [{ type: "text", text: progress.message }] : [], details: {} };
}

/** The error text of an `isError` result: its text blocks, joined. */
export function errorText(result: { content?: McpContent[] }): string {
	return (result.content ?? [])
		.filter((block) => block.type === "text" && typeof block.text === "string")
		.map((block) => block.text)
		.join("\n");
}

/**
 * The details of a structured (`Json<T>`) result: `structuredContent` itself, or the bare
 * value a pi-tool server wrapped as `{"result": value}` (marked `_meta["pi-tool/wrappedResult"]`).
 */
function structuredDetails(structured: unknown, wrapped: boolean): unknown {
	if (wrapped && structured !== null && typeof structured === "object" && !Array.isArray(structured) && "result" in structured) {
		return (structured as { result: unknown }).result;
	}
	return structured;
}

/** The Pi result of a successful MCP call. */
export function piResult(result: { content?: McpContent[]; structuredContent?: unknown; _meta?: unknown }): PiToolResult {
	const out: PiToolResult = { content: piContent(result.content) };
	const details = meta(result, "details");
	if (details !== undefined) out.details = details;
	else if (result.structuredContent !== undefined) out.details = structuredDetails(result.structuredContent, meta(result, "wrappedResult") === true);
	if (meta(result, "terminate") === true) out.terminate = true;
	return out;
}
