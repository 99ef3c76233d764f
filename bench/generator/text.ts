/**
 * Text for generated sessions: prose, identifiers, code, logs, CJK, emoji. Vocabularies are fixed
 * lists plus identifiers derived from them with a fixed seed, so every run builds the same pools.
 * Identifiers follow a skewed (Zipf-like) distribution: a few are everywhere, most are rare, which
 * is what makes search queries of every selectivity possible.
 */
import { createRng, type Rng } from "./prng.ts";

const COMMON = (
	"the a an and or but if then so because when while after before as at by for from in into of on to with without about over under " +
	"is are was were be been being have has had do does did can could should would will may might must need want try make take get " +
	"use run read write check find fix add remove change update move keep show tell ask see look think know mean work start stop " +
	"this that these those it its they them their we our you your i my me he she one two three first last next new old same other " +
	"all any some each every more most less few many much very just only also still again already now here there where why how what which who " +
	"good bad right wrong better best small large long short quick slow simple clear empty full open closed safe real whole part " +
	"time way thing case point place end line file name word number step idea problem question answer reason result example change " +
	"not no yes maybe instead rather than too enough almost always never often sometimes usually probably actually really"
).split(" ");

const TECH = (
	"config cache parser token session branch merge commit lint test build deploy server client request response handler router " +
	"schema migration query index table column row record field value key map list queue stream buffer chunk batch worker thread " +
	"process signal timeout retry error warning exception stack trace log level debug release version package module import export " +
	"function method class interface type generic promise async await callback event listener emitter observer subscription pipeline " +
	"archive summary history search node tree path leaf root parent child sibling offset limit page cursor snapshot checkpoint " +
	"lock mutex atomic rename fsync write read file folder directory workspace repository remote origin upstream rebase conflict " +
	"docker container image volume network port socket proxy gateway cluster shard replica leader follower consensus raft " +
	"auth user account password secret credential permission role scope policy audit tenant quota rate limit throttle backoff " +
	"render component layout style theme widget modal dialog button input form validation state store reducer action effect hook " +
	"compile bundle transpile minify sourcemap polyfill runtime engine heap memory leak garbage collector profile benchmark latency"
).split(" ");

const EXTENSIONS = [".ts", ".ts", ".ts", ".tsx", ".js", ".json", ".md", ".py", ".go", ".rs", ".sql", ".yaml", ".sh", ".css"];
const DIRS = [
	"src",
	"src/lib",
	"src/core",
	"src/services",
	"src/api",
	"src/ui",
	"test",
	"scripts",
	"packages/app/src",
	"packages/server/src",
	"docs",
	"config",
];

const CJK_ZH =
	"的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生自会那后能对着事其里所去行过家十用发天如然作方成者多日都三小二无同么经法当起与好看学进种将还分此心前面又定见只主没公从" +
	"文件代码函数变量测试错误配置缓存分支提交合并部署服务请求响应数据库索引查询版本模块接口类型问题答案原因结果修改更新删除添加检查运行构建";
const CJK_JA = "これはそのファイルをテストしますかでしたがありませんコードの設定エラーを確認して修正お願いしますブランチとコミット";
const CJK_KO = "이 파일을 확인해 주세요 코드 오류 설정 테스트 빌드 배포 브랜치 커밋 수정했습니다 문제가 있습니다";
const EMOJI = ["🙂", "👍", "🚀", "✅", "❌", "⚠️", "🔥", "🎉", "👍🏽", "👨‍👩‍👧", "🇯🇵", "𝒜𝒸𝓂ℯ", "→", "…", "—", "é", "ü", "ß", "ñ"];

/** Syllables of the long tail of made-up words (real prose has tens of thousands of distinct words). */
const SYLLABLES =
	"ba be bi bo bu ca co cu da de di do du fa fe fi fo ga ge go gu ha he hi ho ka ke ki ko la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo wa we wi ya yo za zo ar er ir or ur an en in on un al el il ol st tr pl gr br cl fl sh ch th".split(
		" ",
	);

/** Shared, seeded pools: built once per process (deterministic, independent of any run seed). */
export interface TextPools {
	/** Made-up words, most frequent first: the long tail of a natural vocabulary. */
	readonly tail: readonly string[];
	readonly identifiers: readonly string[];
	readonly paths: readonly string[];
	/** A few MB of code-like lines that tool outputs are cut from. */
	readonly codeCorpus: string;
	/** Offsets of line starts in `codeCorpus`. */
	readonly codeLineStarts: Uint32Array;
}

let pools: TextPools | undefined;

const capital = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

export function textPools(): TextPools {
	if (pools) return pools;
	const rng = createRng("pbot-bench-pools-v1");
	const tail: string[] = [];
	const tailSeen = new Set<string>(COMMON.concat(TECH));
	while (tail.length < 30_000) {
		let w = "";
		for (let k = rng.range(2, 4); k > 0; k--) w += rng.pick(SYLLABLES);
		if (!tailSeen.has(w)) {
			tailSeen.add(w);
			tail.push(w);
		}
	}
	const seen = new Set<string>();
	const identifiers: string[] = [];
	while (identifiers.length < 40_000) {
		const parts = rng.range(2, 3);
		const words = Array.from({ length: parts }, () => rng.pick(TECH));
		let id: string;
		const style = rng.int(10);
		if (style < 6) id = words[0] + words.slice(1).map(capital).join("");
		else if (style < 8) id = words.join("_");
		else if (style < 9) id = words.map(capital).join("");
		else id = words.join("-");
		if (rng.chance(0.3)) id += String(rng.int(100));
		if (!seen.has(id)) {
			seen.add(id);
			identifiers.push(id);
		}
	}
	const paths: string[] = [];
	for (let i = 0; i < 6_000; i++) paths.push(`${rng.pick(DIRS)}/${identifiers[rng.skewed(identifiers.length, 2)]}${rng.pick(EXTENSIONS)}`);
	const lines: string[] = [];
	let size = 0;
	while (size < 3_000_000) {
		const line = codeLine(rng, identifiers, paths, tail);
		lines.push(line);
		size += line.length + 1;
	}
	const codeCorpus = `${lines.join("\n")}\n`;
	const starts: number[] = [0];
	for (let i = 0; i < codeCorpus.length - 1; i++) if (codeCorpus.charCodeAt(i) === 10) starts.push(i + 1);
	pools = { tail, identifiers, paths, codeCorpus, codeLineStarts: Uint32Array.from(starts) };
	return pools;
}

function codeLine(rng: Rng, ids: readonly string[], paths: readonly string[], tail: readonly string[]): string {
	const id = () => ids[rng.skewed(ids.length, 2.2)] as string;
	const indent = "\t".repeat(rng.int(4));
	switch (rng.int(12)) {
		case 0:
			return `${indent}const ${id()} = await ${id()}(${id()}, { ${id()}: ${rng.int(1000)} });`;
		case 1:
			return `${indent}export function ${id()}(${id()}: ${capital(id())}): ${capital(id())} {`;
		case 2:
			return `${indent}if (${id()}.${id()} === undefined) throw new Error("${rng.pick(COMMON)} ${id()} ${rng.pick(TECH)}");`;
		case 3:
			return `${indent}return ${id()}.map((${id()}) => ${id()}.${id()}).filter(Boolean);`;
		case 4:
			return `${indent}// ${sentenceWith(rng, ids, paths, tail, 5, 12)}`;
		case 5:
			return `import { ${id()}, ${id()} } from "./${paths[rng.skewed(paths.length, 2)]}";`;
		case 6:
			return `${indent}}`;
		case 7:
			return `${rng.pick(["INFO", "WARN", "DEBUG", "ERROR"])} ${2024 + rng.int(3)}-0${1 + rng.int(9)}-1${rng.int(10)}T1${rng.int(10)}:${10 + rng.int(50)}:${10 + rng.int(50)}Z ${id()}: ${sentenceWith(rng, ids, paths, tail, 4, 10)}`;
		case 8:
			return `${paths[rng.skewed(paths.length, 2)]}:${1 + rng.int(900)}:${1 + rng.int(80)}: ${rng.pick(["error", "warning"])} ${id()} ${sentenceWith(rng, ids, paths, tail, 3, 8)}`;
		case 9:
			return `  ✓ ${id()} ${sentenceWith(rng, ids, paths, tail, 3, 7)} (${rng.int(900)} ms)`;
		case 10:
			return `${indent}"${id()}": ${rng.chance(0.5) ? `"${id()}"` : rng.int(100000)},`;
		default:
			return `${indent}${id()}.${id()}(${id()}, ${rng.int(64)});`;
	}
}

/** One sentence of `min`..`max` words, with identifiers sprinkled in. */
export function sentenceOf(rng: Rng, min: number, max: number): string {
	const p = textPools();
	return sentenceWith(rng, p.identifiers, p.paths, p.tail, min, max);
}

/**
 * Words follow a Zipf-like law as natural text does: function words most (about half of all
 * words), then technical words, then a long tail of rarer words, identifiers and paths.
 */
function sentenceWith(rng: Rng, identifiers: readonly string[], paths: readonly string[], tail: readonly string[], min: number, max: number): string {
	const n = rng.range(min, max);
	const words: string[] = [];
	for (let i = 0; i < n; i++) {
		const r = rng.next();
		if (r < 0.5) words.push(COMMON[rng.skewed(COMMON.length, 1.6)] as string);
		else if (r < 0.66) words.push(TECH[rng.skewed(TECH.length, 1.4)] as string);
		else if (r < 0.9) words.push(tail[rng.skewed(tail.length, 3)] as string);
		else if (r < 0.97) words.push(`\`${identifiers[rng.skewed(identifiers.length, 2.4)]}\``);
		else words.push(paths[rng.skewed(paths.length, 2)] as string);
	}
	words[0] = capital(words[0] as string);
	return `${words.join(" ")}${rng.pick([".", ".", ".", "?", "!", ":"])}`;
}

export function paragraph(rng: Rng, sentences: number): string {
	const out: string[] = [];
	for (let i = 0; i < sentences; i++) out.push(sentenceOf(rng, 5, 18));
	if (rng.chance(0.08)) out.push(rng.pick(EMOJI));
	return out.join(" ");
}

/** A CJK passage (Chinese mostly, some Japanese and Korean) of about `chars` characters. */
export function cjkText(rng: Rng, chars: number): string {
	const pool = rng.chance(0.7) ? CJK_ZH : rng.chance(0.5) ? CJK_JA : CJK_KO;
	const out: string[] = [];
	let n = 0;
	while (n < chars) {
		const len = rng.range(6, 22);
		let s = "";
		for (let i = 0; i < len; i++) s += pool[rng.int(pool.length)];
		if (rng.chance(0.3)) s += ` \`${textPools().identifiers[rng.skewed(textPools().identifiers.length, 2.4)]}\` `;
		out.push(s + rng.pick(["，", "。", "。", "？", "！"]));
		n += len + 1;
	}
	return out.join("");
}

/** A code block of `lines` lines cut from the corpus. */
export function codeBlock(rng: Rng, lines: number): string {
	return codeSlice(rng, lines * 48).trimEnd();
}

/** About `bytes` characters of code/log-like text, cut on line boundaries from the corpus. */
export function codeSlice(rng: Rng, chars: number): string {
	const p = textPools();
	const starts = p.codeLineStarts;
	let out = "";
	while (out.length < chars) {
		const first = rng.int(starts.length - 1);
		const from = starts[first] as number;
		const want = Math.min(chars - out.length, 16_000);
		let end = from + want;
		if (end >= p.codeCorpus.length) end = p.codeCorpus.length;
		else {
			const nl = p.codeCorpus.indexOf("\n", end);
			end = nl === -1 ? p.codeCorpus.length : nl + 1;
		}
		out += p.codeCorpus.slice(from, end);
	}
	return out;
}

/** A markdown answer of about `chars` characters. */
export function markdownAnswer(rng: Rng, chars: number, cjk: boolean): string {
	const parts: string[] = [];
	let n = 0;
	while (n < chars) {
		const r = rng.next();
		let part: string;
		if (cjk && r < 0.6) part = cjkText(rng, rng.range(40, 200));
		else if (r < 0.62) part = paragraph(rng, rng.range(2, 5));
		else if (r < 0.8) part = Array.from({ length: rng.range(2, 5) }, () => `- ${sentenceOf(rng, 4, 12)}`).join("\n");
		else if (r < 0.92) part = `\`\`\`${rng.pick(["ts", "sh", "json", "diff", ""])}\n${codeBlock(rng, rng.range(3, 14))}\n\`\`\``;
		else part = `## ${sentenceOf(rng, 2, 5)}`;
		parts.push(part);
		n += part.length + 2;
	}
	return parts.join("\n\n");
}

export function identifier(rng: Rng, skew = 2.4): string {
	const ids = textPools().identifiers;
	return ids[rng.skewed(ids.length, skew)] as string;
}

export function filePath(rng: Rng): string {
	const paths = textPools().paths;
	return paths[rng.skewed(paths.length, 2)] as string;
}

/** Base64 of `chars * 3 / 4` random bytes: image data and thinking signatures. */
export function base64Of(rng: Rng, chars: number): string {
	const bytes = Buffer.allocUnsafe(Math.max(3, Math.floor((chars * 3) / 4)));
	for (let i = 0; i + 4 <= bytes.length; i += 4) bytes.writeUInt32LE(rng.u32(), i);
	for (let i = bytes.length - (bytes.length % 4); i < bytes.length; i++) bytes[i] = rng.u32() & 0xff;
	return bytes.toString("base64");
}
