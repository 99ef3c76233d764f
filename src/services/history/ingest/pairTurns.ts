import { map, type OperatorFunction } from "rxjs";
import type { EntryTree, MessageNode } from "./buildEntryTree.ts";
import { qaId } from "../model/ids.ts";
import type { QaNode, QaPart } from "../model/types.ts";

/** The Q&A along one root→leaf path of messages. */
export interface QaPath {
	/** Native entry id of the leaf message. */
	readonly leafId: string;
	readonly nodeIds: readonly string[];
}

/** A session's Q&A nodes and, for every message leaf, the Q&A on its path. */
export interface PairedSession {
	readonly sessionId: string;
	readonly tree: EntryTree;
	/** Every Q&A node, in order of first appearance along the paths. */
	readonly nodes: ReadonlyMap<string, QaNode>;
	readonly paths: readonly QaPath[];
}

export interface PairTurnsOptions {
	/** Session id to use when the file has no readable header. */
	readonly fallbackSessionId?: string;
}

/**
 * Pairs messages into Q&A on every path of the tree (the rules in docs/architecture.md, "Q&A rules"):
 * - a Q&A runs from a user input to the final assistant reply that has no tool calls;
 * - user inputs before that reply (steering, a retry after an abort or error) join the Q&A;
 * - a reply that stopped with `aborted` or `error` does not end the Q&A: the words are kept as a
 *   part, and the Q&A stays open;
 * - tool calls, tool results, thinking, bash executions, custom messages and images are not parts;
 * - a path that ends inside a Q&A yields it with `completed: false`.
 * A Q&A that spans a branch point belongs to each path below it with the parts of that path, so
 * divergence in the middle of a Q&A gives two nodes that share their first input.
 */
export function pairTurns(options: PairTurnsOptions = {}): OperatorFunction<EntryTree, PairedSession> {
	return map((tree) => pairTree(tree, options));
}

/**
 * An open Q&A while walking a path: immutable lists, newest first, shared by the paths below a
 * branch point. Lists, not arrays: a step adds one cell instead of copying what came before
 * (a Q&A with hundreds of tool calls was quadratic), and arrays are made once, when it closes.
 */
interface OpenQa {
	readonly parts: Cons<QaPart> | undefined;
	readonly members: Cons<MessageNode>;
}

interface Cons<T> {
	readonly head: T;
	readonly tail: Cons<T> | undefined;
}

/** A list's items, oldest first. */
function itemsOf<T>(list: Cons<T> | undefined): T[] {
	const out: T[] = [];
	for (let cell = list; cell; cell = cell.tail) out.push(cell.head);
	return out.reverse();
}

/** A Q&A found on a path, before its id is decided. */
interface Draft {
	readonly parts: readonly QaPart[];
	readonly members: readonly MessageNode[];
	readonly completed: boolean;
	readonly key: readonly string[];
	/** File position of its last message: decides who keeps the plain id when keys collide. */
	readonly lastIndex: number;
	id?: string;
}

/** Node ids along a path, shared between paths as a linked list. */
interface PathLink {
	readonly draft: Draft;
	readonly prev: PathLink | undefined;
}

export function pairTree(tree: EntryTree, options: PairTurnsOptions = {}): PairedSession {
	const sessionId = tree.header?.id ?? options.fallbackSessionId ?? "";
	const { messages } = tree;
	const children: number[][] = messages.map(() => []);
	const roots: number[] = [];
	for (const m of messages) {
		if (m.parent < 0) roots.push(m.index);
		else children[m.parent]?.push(m.index);
	}

	const drafts: Draft[] = [];
	const leaves: { leaf: MessageNode; path: PathLink | undefined }[] = [];
	const close = (open: OpenQa, completed: boolean): Draft => {
		const parts = itemsOf(open.parts);
		const members = itemsOf(open.members);
		const inputs = parts.filter((p) => p.kind === "input").map((p) => p.entryId);
		const key = inputs.length > 0 ? inputs : [members[0]?.entryId ?? ""];
		const draft: Draft = { parts, members, completed, key, lastIndex: open.members.head.index };
		drafts.push(draft);
		return draft;
	};

	// Iterative depth-first walk: sessions can be deep (tens of thousands of messages).
	const stack: { index: number; open: OpenQa | undefined; path: PathLink | undefined }[] = [];
	for (let i = roots.length - 1; i >= 0; i--) stack.push({ index: roots[i] as number, open: undefined, path: undefined });
	while (stack.length > 0) {
		const { index, open: before, path: pathBefore } = stack.pop() as (typeof stack)[number];
		const node = messages[index] as MessageNode;
		let open = before;
		let path = pathBefore;
		const step = stepQa(open, node);
		if (step.closed) {
			path = { draft: close(step.closed, step.completed), prev: path };
			open = undefined;
		} else open = step.open;

		const kids = children[index] as number[];
		if (kids.length === 0) {
			if (open) path = { draft: close(open, false), prev: path };
			leaves.push({ leaf: node, path });
			continue;
		}
		for (let k = kids.length - 1; k >= 0; k--) stack.push({ index: kids[k] as number, open, path });
	}

	assignIds(sessionId, drafts);

	const nodes = new Map<string, QaNode>();
	const byDraft = new Map<Draft, QaNode>();
	const paths: QaPath[] = [];
	// Leaves in file order, so branches and nodes come out in the order they were written.
	leaves.sort((a, b) => a.leaf.index - b.leaf.index);
	for (const { leaf, path } of leaves) {
		const ordered: Draft[] = [];
		for (let link = path; link; link = link.prev) ordered.push(link.draft);
		ordered.reverse();
		const nodeIds: string[] = [];
		for (const draft of ordered) {
			let qa = byDraft.get(draft);
			if (!qa) {
				qa = toQaNode(sessionId, draft, tree.labels);
				byDraft.set(draft, qa);
				if (!nodes.has(qa.id)) nodes.set(qa.id, qa);
			}
			nodeIds.push(qa.id);
		}
		paths.push({ leafId: leaf.entryId, nodeIds });
	}
	return { sessionId, tree, nodes, paths };
}

type Step = { closed: OpenQa; completed: boolean; open?: undefined } | { closed?: undefined; open: OpenQa | undefined };

/** One message along a path: how it changes the open Q&A. */
function stepQa(open: OpenQa | undefined, node: MessageNode): Step {
	const m = node.message;
	const add = (part?: QaPart): OpenQa => ({
		parts: part ? { head: part, tail: open?.parts } : open?.parts,
		members: { head: node, tail: open?.members },
	});
	if (m.role === "user") {
		return { open: add({ kind: "input", entryId: node.entryId, text: m.text, at: node.at, ...(m.images > 0 ? { images: m.images } : {}) }) };
	}
	if (m.role === "assistant") {
		// Text beside tool calls is the assistant thinking aloud between tools: not a reply.
		if (m.toolCalls > 0 || m.stopReason === "toolUse") return { open: add() };
		const reply: QaPart = {
			kind: "reply",
			entryId: node.entryId,
			text: m.text,
			at: node.at,
			stopReason: m.stopReason ?? "stop",
			...(m.error !== undefined ? { error: m.error } : {}),
		};
		if (m.stopReason === "aborted" || m.stopReason === "error") return { open: add(reply) };
		// `stop` (or none, in old files) is a finished answer; `length` ends the turn cut short.
		return { closed: add(reply), completed: m.stopReason !== "length" };
	}
	// Tool results, bash executions, custom messages: inside a Q&A they are part of its span.
	return { open: open ? add() : undefined };
}

/**
 * Ids from input entry ids; when two different Q&As share their inputs, the one whose last
 * message was written first keeps the plain id and the others add their own entry ids.
 */
function assignIds(sessionId: string, drafts: Draft[]): void {
	const byKey = new Map<string, Draft[]>();
	for (const d of drafts) {
		const k = d.key.join(",");
		const list = byKey.get(k);
		if (list) list.push(d);
		else byKey.set(k, [d]);
	}
	for (const list of byKey.values()) {
		list.sort((a, b) => a.lastIndex - b.lastIndex);
		for (const d of list) {
			d.id =
				d === list[0]
					? qaId(sessionId, d.key)
					: qaId(
							sessionId,
							d.key,
							d.members.map((m) => m.entryId),
						);
		}
	}
}

function toQaNode(sessionId: string, draft: Draft, labels: ReadonlyMap<string, string>): QaNode {
	const { parts, members } = draft;
	const entryIds = members.map((m) => m.entryId);
	const found = entryIds.map((id) => labels.get(id)).filter((l): l is string => l !== undefined);
	return {
		kind: "qa",
		id: draft.id as string,
		sessionId,
		parts,
		entryIds,
		startedAt: (members[0] as MessageNode).at,
		endedAt: members.reduce((latest, m) => (m.at > latest ? m.at : latest), (members[0] as MessageNode).at),
		completed: draft.completed,
		...(found.length > 0 ? { labels: [...new Set(found)] } : {}),
	};
}
