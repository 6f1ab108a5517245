#!/usr/bin/env node
// pi-tool-coding vs Pi 0.85.0's own coding tools, side by side in one run.
//
//   node compare-coding-tools-with-pi.mjs [--files N] [--read-mb N] [--flood-mb N] [--iterations N]
//
// Pi's tools are loaded from conformance/pi-tools/node_modules (`npm ci` there), or from
// $PI_TOOLS_NODE_MODULES; its grep needs `rg` on PATH (Pi's agent dir gets a symlink).
// Ours run through `target/release/examples/bench_tools` (built here first).
//
// 1. grep over a generated tree of N files (default 100 000) for a pattern with one match;
// 2. read of a large file (default 100 MB) at an offset near its end, 100 lines;
// 3. bash printing an output flood (default 1 GB): time and peak memory (VmHWM: getrusage's
//    maxrss survives execve, so a child of Node would report Node's) of each process.
// Each prints both per-call times and the ratio; the texts are compared (grep's line order
// aside, which Pi leaves to rg's threads).

import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, openSync, writeSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "..");
const opt = (name, dflt) => {
	const i = process.argv.indexOf(`--${name}`);
	return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const FILES = opt("files", 100000);
const READ_MB = opt("read-mb", 100);
const FLOOD_MB = opt("flood-mb", 1000);
const ITER = opt("iterations", 5);

const modules = process.env.PI_TOOLS_NODE_MODULES ?? join(REPO, "conformance", "pi-tools", "node_modules");
const root = mkdtempSync(join(tmpdir(), "pi-coding-bench-"));
const agent = join(root, "agent");
mkdirSync(join(agent, "bin"), { recursive: true });
const rg = spawnSync("sh", ["-c", "command -v rg"], { encoding: "utf8" }).stdout.trim();
if (!rg) {
	console.error("rg is not on PATH: Pi's grep needs it");
	process.exit(2);
}
symlinkSync(rg, join(agent, "bin", "rg"));
process.env.PI_CODING_AGENT_DIR = agent;
process.env.PI_OFFLINE = "1";
const tools = await import(pathToFileURL(join(modules, "@earendil-works", "pi-coding-agent", "dist", "core", "tools", "index.js")).href);

console.log("building target/release/examples/bench_tools ...");
execFileSync("cargo", ["build", "-q", "--release", "-p", "pi-tool-coding", "--example", "bench_tools"], { cwd: REPO, stdio: "inherit" });
const ours = join(REPO, "target", "release", "examples", "bench_tools");

async function piSide(cwd, name, args, iterations) {
	const tool = tools.createTool(name, cwd);
	let first;
	const t0 = process.hrtime.bigint();
	for (let i = 0; i < iterations; i++) {
		let text;
		try {
			const r = await tool.execute("bench", structuredClone(args), undefined, () => {});
			text = r.content.map((c) => c.text ?? "").join("");
		} catch (e) {
			text = e.message;
		}
		first ??= text;
	}
	const perCallMs = Number(process.hrtime.bigint() - t0) / 1e6 / iterations;
	return { perCallMs, text: first };
}

function ourSide(cwd, name, args, iterations) {
	const out = execFileSync(ours, [cwd, String(iterations), name, JSON.stringify(args)], { encoding: "utf8", maxBuffer: 1 << 28 });
	return JSON.parse(out.trim().split("\n").pop());
}

const sorted = (t) => t.split("\n").sort().join("\n");
function report(label, pi, us, sameText) {
	const ratio = pi.perCallMs / us.perCallMs;
	console.log(`${label}: Pi ${pi.perCallMs.toFixed(1)} ms/call, pi-tool-coding ${us.perCallMs.toFixed(1)} ms/call, ${ratio.toFixed(2)}x; same output: ${sameText}`);
}

try {
	// 1. grep
	const tree = join(root, "tree");
	console.log(`generating ${FILES} files ...`);
	for (let i = 0; i < FILES; i++) {
		const dir = join(tree, `d${Math.floor(i / 1000)}`, `e${Math.floor(i / 100) % 10}`);
		if (i % 100 === 0) mkdirSync(dir, { recursive: true });
		const lines = [];
		for (let l = 0; l < 20; l++) lines.push(`line ${l} of file ${i}: some text to search through ${(i * 31 + l) % 997}`);
		if (i === Math.floor(FILES / 2)) lines.push("the unique needle 4242 is here");
		writeFileSync(join(dir, `f${i}.txt`), lines.join("\n") + "\n");
	}
	const grepArgs = { pattern: "needle 4242" };
	const piGrep = await piSide(tree, "grep", grepArgs, ITER);
	const ourGrep = ourSide(tree, "grep", grepArgs, ITER);
	report(`grep, ${FILES} files`, piGrep, ourGrep, sorted(piGrep.text) === sorted(ourGrep.text));

	// 2. read with an offset
	const big = join(root, "big.txt");
	const fd = openSync(big, "w");
	const line = `${"x".repeat(90)} line\n`;
	const lines = Math.floor((READ_MB * 1024 * 1024) / line.length);
	const chunk = line.repeat(10000);
	for (let i = 0; i < lines / 10000; i++) writeSync(fd, chunk);
	closeSync(fd);
	const readArgs = { path: big, offset: Math.floor(lines * 0.9), limit: 100 };
	const piRead = await piSide(root, "read", readArgs, ITER);
	const ourRead = ourSide(root, "read", readArgs, ITER);
	report(`read, ${READ_MB} MB at offset ${readArgs.offset}`, piRead, ourRead, piRead.text === ourRead.text);
	rmSync(big);

	// 3. bash output flood: each side in its own process, for its peak memory.
	const flood = `yes '${"y".repeat(99)}' | head -c ${FLOOD_MB * 1024 * 1024}`;
	const piScript = `
		const tools = await import(${JSON.stringify(pathToFileURL(join(modules, "@earendil-works", "pi-coding-agent", "dist", "core", "tools", "index.js")).href)});
		const t0 = process.hrtime.bigint();
		const r = await tools.createTool("bash", ${JSON.stringify(root)}).execute("b", { command: ${JSON.stringify(flood)} }, undefined, () => {});
		const ms = Number(process.hrtime.bigint() - t0) / 1e6;
		const hwm = /VmHWM:\\s*(\\d+)/.exec((await import("node:fs")).readFileSync("/proc/self/status", "utf8"));
		console.log(JSON.stringify({ perCallMs: ms, maxRssKb: Number(hwm[1]), text: r.content[0].text }));`;
	const piFlood = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", piScript], { encoding: "utf8", maxBuffer: 1 << 28 }).trim().split("\n").pop());
	const ourFlood = ourSide(root, "bash", { command: flood }, 1);
	const tail = (t) => t.replace(/pi-bash-[0-9a-f]{16}\.log/, "pi-bash-<random>.log");
	report(`bash, ${FLOOD_MB} MB of output`, piFlood, ourFlood, tail(piFlood.text) === tail(ourFlood.text));
	console.log(`  peak memory (maxRSS): Pi ${piFlood.maxRssKb} KB, pi-tool-coding ${ourFlood.maxRssKb} KB`);
	for (const f of [piFlood, ourFlood]) {
		const m = /Full output: (\S+)\]/.exec(f.text);
		if (m) rmSync(m[1], { force: true });
	}
} finally {
	rmSync(root, { recursive: true, force: true });
}
