#!/usr/bin/env node
// Generates pi-tool/tests/data/partial_json/corpus.json: what pi-ai 0.85.0 (under the Node
// that runs this script) makes of streamed tool-call argument texts, for the replay test
// in pi-tool/src/providers/partial_json/tests.rs.
//
// Usage:
//   node scripts/gen-partial-json-corpus.mjs NODE_MODULES_DIR            # rewrites the file
//   node scripts/gen-partial-json-corpus.mjs NODE_MODULES_DIR --stdout   # prints it
// where NODE_MODULES_DIR holds @earendil-works/pi-ai (0.85.0) and partial-json (0.1.7),
// for example /tmp/pc/node_modules. Run it with Node 22 (its JSON.parse messages carry
// "(line L column C)"), e.g. NODE_MODULES_DIR/.bin/node.
//
// For every document below, each prefix (cut at code points: a Rust string cannot end
// inside a surrogate pair) is recorded with three results:
//   s: JSON.stringify(parseStreamingJson(prefix))
//   r: parseJsonWithRepair(prefix)  as "ok:" + JSON.stringify(value) or "err:" + message
//   j: JSON.parse(prefix)           likewise
// To keep the file small, a result equal to the previous prefix's is written as "=", and
// an r equal to its j as "j".
// The `errors` list records s, r and j for whole texts that exercise V8's messages and
// partial-json's quirks, followed by 400 seeded random texts.
//
// Lone surrogates (a cut "\ud83d\ude00" escape, a message that quotes half a pair) are
// written as U+FFFD, which is what pi-tool holds for them (a Rust string has no lone
// surrogates); this is the one place the corpus records pi-tool's documented difference
// instead of JavaScript's value.

import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [nodeModules, mode] = process.argv.slice(2);
if (!nodeModules) {
	console.error("usage: node scripts/gen-partial-json-corpus.mjs NODE_MODULES_DIR [--stdout]");
	process.exit(2);
}
const piAiDir = path.join(nodeModules, "@earendil-works", "pi-ai");
const piAiVersion = JSON.parse(readFileSync(path.join(piAiDir, "package.json"), "utf8")).version;
const partialJsonVersion = JSON.parse(
	readFileSync(path.join(nodeModules, "partial-json", "package.json"), "utf8"),
).version;
const { parseStreamingJson, parseJsonWithRepair } = await import(
	pathToFileURL(path.join(piAiDir, "dist", "utils", "json-parse.js")).href
);

const DOCUMENTS = [
	'{"path": "src/main.rs", "content": "fn main() {\\n    println!(\\"hi\\");\\n}\\n"}',
	'{"a": [1, -2.5e+3, true, false, null, "x"], "b": {"c": {}}, "d": []}',
	'{"command":"ls -la C:\\\\Users\\\\me","timeout":30}',
	'{"path": "C:\\Users\\new\\temp\\x.txt", "q": "\\d+"}',
	'{"text": "line1\nline2\tend\u0001", "n": 1}',
	'{"emoji": "😀 é ü 中文", "k": "\\u00e9\\ud83d\\ude00\\u4e2d"}',
	'{"big": 12345678901234567890, "inf": 1e400, "neg": -0, "small": 1e-7, "f": 0.1, "e": 1E+21, "i": 9007199254740993}',
	'{"b": 1, "2": 2, "1": 1, "a": {"10": 0, "9": 9, "x": [{"0": 1}]}}',
	'{"a": 1, "b": 2, "a": 3}',
	'[{"x": 1}, [2, [3, []]], "s", 4.5]',
	'"just a string with \\"quotes\\" and \\\\ backslash"',
	"12.5e3",
	"-0.25",
	"true",
	"null",
	'{"a": NaN, "b": Infinity, "c": -Infinity, "d": [NaN, -Infinity]}',
	'{"a" 1, "b": 2}',
	"{a: 1, b: 2}",
	'{"a": 1,, "b": 2}',
	"[1 2 3, 4]",
	'{"a": tru, "b": fals}',
	'{"__proto__": {"x": 1}, "y": 2}',
	'{"a": "b"} trailing text',
	'  {"padded": true}  ',
	'\u00a0{"nbsp": 1}\u00a0',
	'{"a": [1, 2}, "b": 3}',
	'{"e": 1x, "f": 2}',
	'{"a": 1.}',
	'{"a"😀1, "b": 2}',
	'{"a"é1, "b": 2}',
	"[[[[[[[[[[1]]]]]]]]]]",
	'{"k": "\\u12", "m": "\\uZZZZ"}',
	'{\r\n  "multi": [\r\n    1,\r\n    "two"\r\n  ],\r\n  "three": {\r\n  }\r\n}',
	'{"nested": {"deep": {"deeper": {"deepest": "value"}}}, "after": [true]}',
	'{"s": "tab\\there", "u": "\\u0041\\u00"}',
	'{"edits":[{"oldText":"a\\\\b","newText":"c\\\\\\\\d"}]}',
];

const ERRORS = [
	"", " ", "{", '{"a"', '{"a":1,}', "[1,]", "{a:1}", "tru", "x", '{"a":1}x', '"\\x"', "123abc", "-", "01",
	"1.", "1e", '{"a":1 "b":2}', "[1 2]", "nul", '"abc', '{"a":"', "  [", '"a\nb"',
	'{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": x}', '"\\u12"', '{"a" 1}', "]", "{,}", "1 2", "-a",
	'"\\u00e9', '{\n"a":\n x}', '["a" "b"]', '[1,\n"x"\n"y"]', '{"a":1}\n\n  x', "truex", "nulx", '{"a":tru}',
	'{"abcdefghijklmnopqrstu": x}', "x234567890123456789", "x2345678901234567890", "x23456789012345678901",
	'{"a":"b" , "c" : x }   ', "é", "[é]", '{"😀😀😀😀😀😀😀😀😀😀😀😀": x}', '"\t"', '{"a":1e}', "[-]", "[1.e5]",
	"[1e+]", '["a":1]', '{"a":1:}', "[,]", '{"a"::1}', "\u0000", "[01]", "[-01]", "[00]", "[0x1]", "[Infinity]",
	"[NaN]", "[.5]", "[+1]", "NaN", "Infinity", "undefined", "[object Object]", " NaN", "-Infinity", '{"a":1,',
	'{"a":', '{"a":1', "[1", "[1,", "[", '"\\u1x34"', '"\\u12', '"\\', '"\\u', '"ab\\', '{"a":1,"b"', '{"a" ',
	'{"a":1 ', "1.5e+", "1.5e", "0.", "[1.", "[-", '"a\r\nb"', '{\r\n"a":\r\n x}', '{\r"a":\r x}',
	'{"a":1}\r\n\r\nx', '{"a":1}\r\rx', '{"a":1}\n\rx', '"abc\\qdef"', "t", "f", "fals", "falsy", "nult", "[tru]",
	"[t,", '{"a":1}\u00a0', "\ufeff{}", "123456789012345678901234567890x", '{"a": [1, 2, 3, 4, 5, 6, 7, 8, 9, x]}',
	'["a","b"x]', "[😀]", '{"path": "C:\\Users\\x"} extra', '{"t": "a\nb"', '{"t": "bad \\q', "{\"x\": [1, 2, 3, 4, 5, 6, 7, 8]}}",
	'{"a": 1}   \n  {"b": 2}', "\u2028{}", '{"u": "\\uD83D"}', '"\\Ā"', '"\\😀"', '"\\é"', "tr0", 'n"', "[t1]",
	"f-", '{"__proto__": null, "__proto__": 1.5, "a": ', '{"__proto__": {"__proto__": null}, "__proto__": 2, "b": ',
	'{"__proto__": [1], "__proto__": 3, "c":', '{"__proto__": 7, "d": 1', '[{"k"😀x, "b": 1}, 2, 3',
	'[{"k"é 1, "b": 1}, 2', '[1, 2}, 3]', '[{"a": 1x}, {"b": 2}',
];

// Random texts: JSON-like values with random blanks, cut and mutated with the characters
// the parsers treat specially. A fixed seed keeps the file stable.
const RANDOM_CASES = 400;
const ALPHABET = ['"', "\\", "{", "}", "[", "]", ",", ":", "e", "E", "-", "+", ".", "0", "1", "9", "a", "n", "t", "f",
	"u", "l", "r", "s", "N", "I", "\n", "\r", "\t", " ", "\u0001", "😀", "é", "\u00a0", "/", "x", "_", "\u2028"];
let seed = 20251201;
function random() {
	// mulberry32
	seed = (seed + 0x6d2b79f5) | 0;
	let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
	t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
	return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (items) => items[Math.floor(random() * items.length)];
function randomString() {
	let s = "";
	const n = Math.floor(random() * 8);
	for (let i = 0; i < n; i++) {
		s += pick(["a", " ", "\\n", '\\"', "\\\\", "\\u00e9", "\\ud83d\\ude00", "é", "😀", "\\t", "\\/", "1", "\\q", "\n", "\\u12", "\u0002", "\\"]);
	}
	return s;
}
function randomNumber() {
	return pick(["0", "-0", "1", "-1", "12", "1.5", "-2.25", "1e5", "1E-3", "2.5e+10", "12345678901234567890", "1e400",
		"-1e400", "0.1", "9007199254740993", "1.", "01", "-", "1e", ".5", "5x"]);
}
function randomValue(depth) {
	const r = random();
	if (depth > 3 || r < 0.35) {
		return pick(["null", "true", "false", randomNumber(), `"${randomString()}"`, "NaN", "Infinity", "tru", "nul"]);
	}
	const n = Math.floor(random() * 4);
	const items = [];
	if (r < 0.65) {
		for (let i = 0; i < n; i++) items.push(randomValue(depth + 1));
		return `[${items.join(pick([",", ", ", " ,", ",\n"]))}]`;
	}
	for (let i = 0; i < n; i++) {
		const key = pick(["a", "b", "1", "0", "10", "__proto__", "key", "é", randomString()]);
		items.push(`"${key}"${pick([":", ": ", " : ", ":\n"])}${randomValue(depth + 1)}`);
	}
	return `{${items.join(pick([",", ", ", ",\r\n"]))}}`;
}
function mutate(text) {
	const points = Array.from(text);
	const edits = Math.floor(random() * 3);
	for (let i = 0; i < edits; i++) {
		const at = Math.floor(random() * (points.length + 1));
		const op = random();
		if (op < 0.4) points.splice(at, 0, pick(ALPHABET));
		else if (op < 0.7) points.splice(at, 1);
		else points[at] = pick(ALPHABET);
	}
	return points.join("");
}
function randomText() {
	let text = randomValue(0);
	if (random() < 0.7) text = mutate(text);
	if (random() < 0.6) {
		const points = Array.from(text);
		text = points.slice(0, Math.floor(random() * (points.length + 1))).join("");
	}
	return text;
}

/** Replaces lone surrogates with U+FFFD everywhere in a value (keys included). */
function wellFormed(value) {
	if (typeof value === "string") return value.toWellFormed();
	if (Array.isArray(value)) return value.map(wellFormed);
	if (value && typeof value === "object") {
		const out = {};
		for (const [k, v] of Object.entries(value)) {
			Object.defineProperty(out, k.toWellFormed(), {
				value: wellFormed(v),
				enumerable: true,
				writable: true,
				configurable: true,
			});
		}
		return out;
	}
	return value;
}

function result(fn, text) {
	try {
		return `ok:${JSON.stringify(wellFormed(fn(text)))}`;
	} catch (error) {
		return `err:${String(error.message).toWellFormed()}`;
	}
}

const documents = DOCUMENTS.map((text) => {
	const points = Array.from(text);
	const prefixes = [];
	let previous = { s: undefined, r: undefined, j: undefined };
	for (let n = 1; n <= points.length; n++) {
		const prefix = points.slice(0, n).join("");
		const now = {
			s: JSON.stringify(wellFormed(parseStreamingJson(prefix))),
			r: result(parseJsonWithRepair, prefix),
			j: result(JSON.parse, prefix),
		};
		prefixes.push([
			now.s === previous.s ? "=" : now.s,
			now.r === now.j ? "j" : now.r === previous.r ? "=" : now.r,
			now.j === previous.j ? "=" : now.j,
		]);
		previous = now;
	}
	return { text, prefixes };
});

const randomTexts = [];
while (randomTexts.length < RANDOM_CASES) randomTexts.push(randomText());
const errors = [...ERRORS, ...randomTexts].map((text) => ({
	text,
	s: JSON.stringify(wellFormed(parseStreamingJson(text))),
	r: result(parseJsonWithRepair, text),
	j: result(JSON.parse, text),
}));

const lines = [
	"{",
	`"generator": "scripts/gen-partial-json-corpus.mjs",`,
	`"node": ${JSON.stringify(process.version)},`,
	`"pi-ai": ${JSON.stringify(piAiVersion)},`,
	`"partial-json": ${JSON.stringify(partialJsonVersion)},`,
	`"documents": [`,
	documents.map((d) => JSON.stringify(d)).join(",\n"),
	"],",
	`"errors": [`,
	errors.map((e) => JSON.stringify(e)).join(",\n"),
	"]",
	"}",
];
const output = `${lines.join("\n")}\n`;

if (mode === "--stdout") {
	process.stdout.write(output);
} else {
	const here = path.dirname(fileURLToPath(import.meta.url));
	const out = path.join(here, "..", "pi-tool", "tests", "data", "partial_json", "corpus.json");
	writeFileSync(out, output);
	console.error(`wrote ${out} (${documents.length} documents, ${errors.length} error texts, ${output.length} bytes)`);
}
