;; The byte searches of `byteSearch.ts`, in WebAssembly text, and the byte work over JSON that the ingest
;; (`string_end`) and a rebuild of the search text (`next_text`, `unescape_fold`: `textArena.ts`) do.
;; `node scripts/byte-search-wasm.mjs` compiles it (wabt) into `byteSearchModule.ts`; a test checks that
;; the two still agree.
;;
;; find(hay, len, needle, k, oa, ob): the offset of the first occurrence of the k bytes at `needle`
;; in the `len` bytes at `hay`, or -1. k >= 2 (the caller leaves one byte to `Buffer.indexOf`,
;; which finds it with `memchr`); oa and ob are two different offsets in the needle, below k.
;;
;; Sixteen positions are tested at once (SIMD): a position is a candidate when the needle's bytes at
;; oa and ob are there; only candidates are compared byte by byte. The caller picks the needle's two
;; rarest bytes (`pairToTest` in `byteSearch.ts`), so that few positions are candidates. Four such
;; blocks are tested per step, and their candidates looked at only when there is one. Over the
;; bench's 85 MB of folded text (its query mix, one process): 3.8 ms a query, against 6–7 with the
;; needle's first and last bytes, 8.5 with a block per step, and 20–65 with `Buffer.indexOf`, whose
;; `memchr` stops at every "c" of "connection pool".
(module
  ;; The memory is the caller's (`searchableBuffer`), made at the size it needs and never grown:
  ;; growing it would detach every view of it.
  (import "pbot" "memory" (memory 1))
  ;; find(hay, len, needle, k, oa, ob): sixty-four positions per step while none is a candidate
  ;; (the usual case: one test of the four blocks' candidates together), each block's candidates
  ;; then in order; the last blocks sixteen at a time, and the last positions one at a time. A
  ;; block at i reads bytes up to i + ob + 15 <= i + k + 14, below len while i <= len - k - 15.
  (func (export "find") (param $hay i32) (param $len i32) (param $needle i32) (param $k i32) (param $oa i32) (param $ob i32) (result i32)
    (local $i i32)
    (local $last_start i32)
    (local $a v128)
    (local $b v128)
    (local $p i32)
    (local $q i32)
    (local $c0 v128)
    (local $c1 v128)
    (local $c2 v128)
    (local $c3 v128)
    (local $found i32)
    (local $j i32)
    (local.set $a (i8x16.splat (i32.load8_u (i32.add (local.get $needle) (local.get $oa)))))
    (local.set $b (i8x16.splat (i32.load8_u (i32.add (local.get $needle) (local.get $ob)))))
    (local.set $last_start (i32.sub (i32.sub (local.get $len) (local.get $k)) (i32.const 15)))
    (block $quads_done
      (loop $quads
        (br_if $quads_done (i32.gt_s (i32.add (local.get $i) (i32.const 48)) (local.get $last_start)))
        (local.set $p (i32.add (local.get $hay) (local.get $i)))
        (local.set $q (i32.add (local.get $p) (local.get $ob)))
        (local.set $p (i32.add (local.get $p) (local.get $oa)))
        (local.set $c0 (v128.and (i8x16.eq (v128.load (local.get $p)) (local.get $a)) (i8x16.eq (v128.load (local.get $q)) (local.get $b))))
        (local.set $c1 (v128.and (i8x16.eq (v128.load offset=16 (local.get $p)) (local.get $a)) (i8x16.eq (v128.load offset=16 (local.get $q)) (local.get $b))))
        (local.set $c2 (v128.and (i8x16.eq (v128.load offset=32 (local.get $p)) (local.get $a)) (i8x16.eq (v128.load offset=32 (local.get $q)) (local.get $b))))
        (local.set $c3 (v128.and (i8x16.eq (v128.load offset=48 (local.get $p)) (local.get $a)) (i8x16.eq (v128.load offset=48 (local.get $q)) (local.get $b))))
        (if (v128.any_true (v128.or (v128.or (local.get $c0) (local.get $c1)) (v128.or (local.get $c2) (local.get $c3))))
          (then
            (local.set $found (call $candidates (local.get $hay) (local.get $i) (i8x16.bitmask (local.get $c0)) (local.get $needle) (local.get $k)))
            (if (i32.ge_s (local.get $found) (i32.const 0)) (then (return (local.get $found))))
            (local.set $found (call $candidates (local.get $hay) (i32.add (local.get $i) (i32.const 16)) (i8x16.bitmask (local.get $c1)) (local.get $needle) (local.get $k)))
            (if (i32.ge_s (local.get $found) (i32.const 0)) (then (return (local.get $found))))
            (local.set $found (call $candidates (local.get $hay) (i32.add (local.get $i) (i32.const 32)) (i8x16.bitmask (local.get $c2)) (local.get $needle) (local.get $k)))
            (if (i32.ge_s (local.get $found) (i32.const 0)) (then (return (local.get $found))))
            (local.set $found (call $candidates (local.get $hay) (i32.add (local.get $i) (i32.const 48)) (i8x16.bitmask (local.get $c3)) (local.get $needle) (local.get $k)))
            (if (i32.ge_s (local.get $found) (i32.const 0)) (then (return (local.get $found))))))
        (local.set $i (i32.add (local.get $i) (i32.const 64)))
        (br $quads)))
    (block $blocks_done
      (loop $blocks
        (br_if $blocks_done (i32.gt_s (local.get $i) (local.get $last_start)))
        (local.set $p (i32.add (local.get $hay) (local.get $i)))
        (local.set $found
          (call $candidates (local.get $hay) (local.get $i)
            (i8x16.bitmask
              (v128.and
                (i8x16.eq (v128.load (i32.add (local.get $p) (local.get $oa))) (local.get $a))
                (i8x16.eq (v128.load (i32.add (local.get $p) (local.get $ob))) (local.get $b))))
            (local.get $needle) (local.get $k)))
        (if (i32.ge_s (local.get $found) (i32.const 0)) (then (return (local.get $found))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $blocks)))
    ;; The last positions (fewer than sixteen), one at a time.
    (block $tail_done
      (loop $tail
        (br_if $tail_done (i32.gt_s (local.get $i) (i32.sub (local.get $len) (local.get $k))))
        (local.set $j (i32.const 0))
        (block $differs
          (loop $compare
            (if (i32.ge_u (local.get $j) (local.get $k))
              (then (return (local.get $i))))
            (br_if $differs
              (i32.ne
                (i32.load8_u (i32.add (i32.add (local.get $hay) (local.get $i)) (local.get $j)))
                (i32.load8_u (i32.add (local.get $needle) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $compare)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $tail)))
    (i32.const -1))

  ;; candidates(hay, i, mask, needle, k): of the block of sixteen positions at i whose candidates
  ;; (the two tested bytes match) are the bits of `mask`, the lowest position where the whole needle
  ;; is, or -1: each candidate compared byte by byte.
  (func $candidates (param $hay i32) (param $i i32) (param $mask i32) (param $needle i32) (param $k i32) (result i32)
    (local $at i32)
    (local $j i32)
    (block $candidates_done
      (loop $candidates
        (br_if $candidates_done (i32.eqz (local.get $mask)))
        (local.set $at (i32.add (local.get $i) (i32.ctz (local.get $mask))))
        (local.set $j (i32.const 0))
        (block $differs
          (loop $compare
            (if (i32.ge_u (local.get $j) (local.get $k))
              (then (return (local.get $at))))
            (br_if $differs
              (i32.ne
                (i32.load8_u (i32.add (i32.add (local.get $hay) (local.get $at)) (local.get $j)))
                (i32.load8_u (i32.add (local.get $needle) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $compare)))
        (local.set $mask (i32.and (local.get $mask) (i32.sub (local.get $mask) (i32.const 1))))
        (br $candidates)))
    (i32.const -1))

  ;; plain(p, end): the address of the first byte in [p, end) that is a quote, a backslash or a
  ;; control character (below 0x20), or `end`: the plain run `string_end` skips, sixteen bytes at a
  ;; time. Over the bench's session files (most of their bytes are inside strings: tool results)
  ;; 2.5–3× faster than the four-byte steps of `scanMessageLine.ts`. Not exported: only
  ;; `string_end` calls it.
  (func $plain (param $p i32) (param $end i32) (result i32)
    (local $v v128)
    (local $mask i32)
    (local $c i32)
    (block $blocks_done
      (loop $blocks
        (br_if $blocks_done (i32.gt_s (i32.add (local.get $p) (i32.const 16)) (local.get $end)))
        (local.set $v (v128.load (local.get $p)))
        (local.set $mask
          (i8x16.bitmask
            (v128.or
              (v128.or
                (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x22)))
                (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x5c))))
              (i8x16.lt_u (local.get $v) (i8x16.splat (i32.const 0x20))))))
        (if (local.get $mask)
          (then (return (i32.add (local.get $p) (i32.ctz (local.get $mask))))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $blocks)))
    ;; The last bytes (fewer than sixteen), one at a time.
    (block $tail_done
      (loop $tail
        (br_if $tail_done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $c (i32.load8_u (local.get $p)))
        (if (i32.or
              (i32.or (i32.eq (local.get $c) (i32.const 0x22)) (i32.eq (local.get $c) (i32.const 0x5c)))
              (i32.lt_u (local.get $c) (i32.const 0x20)))
          (then (return (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $tail)))
    (local.get $end))

  ;; string_end(p, end): `p` is the byte after a JSON string's opening quote; the address after its
  ;; closing quote, or -1 when the string is not valid JSON before `end` (a control byte, an unknown
  ;; escape, a `\u` without four hex digits, no closing quote). What `scanString` in
  ;; `scanMessageLine.ts` does byte by byte, in one call: plain runs are skipped with `plain`, escapes
  ;; checked here.
  (func $string_end (export "string_end") (param $p i32) (param $end i32) (result i32)
    (local $c i32)
    (local $h i32)
    (local $k i32)
    (loop $runs
      (local.set $p (call $plain (local.get $p) (local.get $end)))
      (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
      (local.set $c (i32.load8_u (local.get $p)))
      (if (i32.eq (local.get $c) (i32.const 0x22)) (then (return (i32.add (local.get $p) (i32.const 1)))))
      ;; A control byte (plain stopped at it): not allowed in a string.
      (if (i32.ne (local.get $c) (i32.const 0x5c)) (then (return (i32.const -1))))
      ;; A backslash: what it escapes must be inside the string's bytes.
      (if (i32.ge_u (i32.add (local.get $p) (i32.const 1)) (local.get $end)) (then (return (i32.const -1))))
      (local.set $c (i32.load8_u (i32.add (local.get $p) (i32.const 1))))
      (if (i32.or
            (i32.or
              (i32.or (i32.eq (local.get $c) (i32.const 0x22)) (i32.eq (local.get $c) (i32.const 0x5c)))
              (i32.or (i32.eq (local.get $c) (i32.const 0x2f)) (i32.eq (local.get $c) (i32.const 0x62))))
            (i32.or
              (i32.or (i32.eq (local.get $c) (i32.const 0x66)) (i32.eq (local.get $c) (i32.const 0x6e)))
              (i32.or (i32.eq (local.get $c) (i32.const 0x72)) (i32.eq (local.get $c) (i32.const 0x74)))))
        (then
          (local.set $p (i32.add (local.get $p) (i32.const 2)))
          (br $runs)))
      (if (i32.ne (local.get $c) (i32.const 0x75)) (then (return (i32.const -1))))
      ;; \u and four hex digits.
      (if (i32.gt_u (i32.add (local.get $p) (i32.const 6)) (local.get $end)) (then (return (i32.const -1))))
      (local.set $k (i32.const 2))
      (loop $hex
        (local.set $h (i32.load8_u (i32.add (local.get $p) (local.get $k))))
        (if (i32.eqz
              (i32.or
                (i32.le_u (i32.sub (local.get $h) (i32.const 0x30)) (i32.const 9))
                (i32.or
                  (i32.le_u (i32.sub (local.get $h) (i32.const 0x41)) (i32.const 5))
                  (i32.le_u (i32.sub (local.get $h) (i32.const 0x61)) (i32.const 5)))))
          (then (return (i32.const -1))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br_if $hex (i32.lt_u (local.get $k) (i32.const 6))))
      (local.set $p (i32.add (local.get $p) (i32.const 6)))
      (br $runs))
    (i32.const -1))

  ;; quote(p, end): the address of the first quote in [p, end), or `end`; sixteen bytes at a time.
  (func $quote (param $p i32) (param $end i32) (result i32)
    (local $mask i32)
    (block $blocks_done
      (loop $blocks
        (br_if $blocks_done (i32.gt_s (i32.add (local.get $p) (i32.const 16)) (local.get $end)))
        (local.set $mask (i8x16.bitmask (i8x16.eq (v128.load (local.get $p)) (i8x16.splat (i32.const 0x22)))))
        (if (local.get $mask) (then (return (i32.add (local.get $p) (i32.ctz (local.get $mask))))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $blocks)))
    (block $tail_done
      (loop $tail
        (br_if $tail_done (i32.ge_u (local.get $p) (local.get $end)))
        (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x22)) (then (return (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $tail)))
    (local.get $end))

  ;; next_text(p, end): in JSON bytes whose strings start at or after `p` (p is outside any string),
  ;; the address of the opening quote of the next `"text"` member's string value; -1 when there is
  ;; none before `end`; -2 when a string is not valid JSON; -3 when the JSON is not written as this
  ;; project writes it (`JSON.stringify`: no space after a string, no escape in a key) or a `"text"`
  ;; member's value is not a string — then a key JSON.parse reads as `text` could go unseen here, and
  ;; the caller reads the file the usual way. Every string is jumped whole (`string_end`), so a
  ;; `"text"` inside a string is never taken for a key. What rebuilding the search text reads archives
  ;; with (`readArchiveTexts`).
  (func (export "next_text") (param $p i32) (param $end i32) (result i32)
    (local $q i32)
    (local $e i32)
    (local $c i32)
    (local $k i32)
    (loop $strings
      (local.set $q (call $quote (local.get $p) (local.get $end)))
      (if (i32.ge_u (local.get $q) (local.get $end)) (then (return (i32.const -1))))
      (local.set $e (call $string_end (i32.add (local.get $q) (i32.const 1)) (local.get $end)))
      (if (i32.lt_s (local.get $e) (i32.const 0)) (then (return (i32.const -2))))
      (local.set $c (select (i32.load8_u (local.get $e)) (i32.const 0) (i32.lt_u (local.get $e) (local.get $end))))
      ;; After a string in compact JSON: `:` (a key), or `,` `}` `]` (a value); never space.
      (if (i32.or
            (i32.or (i32.eq (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 0x0a)))
            (i32.or (i32.eq (local.get $c) (i32.const 0x0d)) (i32.eq (local.get $c) (i32.const 0x09))))
        (then (return (i32.const -3))))
      (if (i32.eq (local.get $c) (i32.const 0x3a))
        (then
          ;; Six bytes, `"text"` (0x74786574: "text" read as a little-endian word).
          (if (i32.and
                (i32.eq (i32.sub (local.get $e) (local.get $q)) (i32.const 6))
                (i32.eq (i32.load (i32.add (local.get $q) (i32.const 1))) (i32.const 0x74786574)))
            (then
              (if (i32.and
                    (i32.lt_u (i32.add (local.get $e) (i32.const 1)) (local.get $end))
                    (i32.eq (i32.load8_u (i32.add (local.get $e) (i32.const 1))) (i32.const 0x22)))
                (then (return (i32.add (local.get $e) (i32.const 1)))))
              (return (i32.const -3))))
          ;; A key with an escape (`"te\u0078t"` is `text` to JSON.parse).
          (local.set $k (i32.add (local.get $q) (i32.const 1)))
          (block $plain_key
            (loop $key
              (br_if $plain_key (i32.ge_u (local.get $k) (i32.sub (local.get $e) (i32.const 1))))
              (if (i32.eq (i32.load8_u (local.get $k)) (i32.const 0x5c)) (then (return (i32.const -3))))
              (local.set $k (i32.add (local.get $k) (i32.const 1)))
              (br $key)))))
      (local.set $p (local.get $e))
      (br $strings))
    (i32.const -1))

  ;; Whether the last `unescape_fold` met a character that folding may change or that is not UTF-8
  ;; (see `$invariant`): that text is folded as a string by the caller.
  (global $high (export "high") (mut i32) (i32.const 0))
  ;; The address below which the input's bytes beyond ASCII were found to be characters `$invariant`
  ;; accepts (a character's bytes may lie in two blocks).
  (global $checked_to (mut i32) (i32.const 0))

  ;; invariant(p, end): the length of the UTF-8 character at `p` when it is one that folding leaves as
  ;; it is wherever it stands, else 0 (not one, or not well-formed UTF-8 before `end`). Such a
  ;; character has no lowercase of its own, is its own canonical composition, is not a combining mark,
  ;; and never composes with the character before it: U+0080–00BF (Latin-1 punctuation and signs),
  ;; U+2002–203F (general punctuation), U+2190–2328 and U+232B–245F (arrows, mathematical and
  ;; technical signs), U+2500–27BF (box drawing, shapes, symbols, dingbats), U+3000–3029, U+3030–3098
  ;; and U+309B–30FF (CJK punctuation, kana), U+3400–9FFF (CJK ideographs), U+AC00–D7A3 (Hangul
  ;; syllables), U+FF01–FF20 and U+FF3B–FFEF (full-width forms but the capital letters) and
  ;; U+1F000–1FAFF (emoji and other pictographs). A test checks every one of them against `fold.ts`
  ;; and canonical composition; texts with anything else are folded as strings.
  (func $invariant (param $p i32) (param $end i32) (result i32)
    (local $c0 i32)
    (local $c1 i32)
    (local $c2 i32)
    (local $c3 i32)
    (local $cp i32)
    (local.set $c0 (i32.load8_u (local.get $p)))
    (if (i32.eq (local.get $c0) (i32.const 0xc2))
      (then
        (if (i32.ge_u (i32.add (local.get $p) (i32.const 1)) (local.get $end)) (then (return (i32.const 0))))
        (return (select (i32.const 2) (i32.const 0)
          (i32.eq (i32.and (i32.load8_u (i32.add (local.get $p) (i32.const 1))) (i32.const 0xc0)) (i32.const 0x80))))))
    (if (i32.eq (i32.and (local.get $c0) (i32.const 0xf0)) (i32.const 0xe0))
      (then
        (if (i32.ge_u (i32.add (local.get $p) (i32.const 2)) (local.get $end)) (then (return (i32.const 0))))
        (local.set $c1 (i32.load8_u (i32.add (local.get $p) (i32.const 1))))
        (local.set $c2 (i32.load8_u (i32.add (local.get $p) (i32.const 2))))
        (if (i32.or
              (i32.ne (i32.and (local.get $c1) (i32.const 0xc0)) (i32.const 0x80))
              (i32.ne (i32.and (local.get $c2) (i32.const 0xc0)) (i32.const 0x80)))
          (then (return (i32.const 0))))
        (local.set $cp
          (i32.or
            (i32.or (i32.shl (i32.and (local.get $c0) (i32.const 0x0f)) (i32.const 12)) (i32.shl (i32.and (local.get $c1) (i32.const 0x3f)) (i32.const 6)))
            (i32.and (local.get $c2) (i32.const 0x3f))))
        (return (select (i32.const 3) (i32.const 0)
          (i32.or
            (i32.or
              (i32.or (call $within (local.get $cp) (i32.const 0x2002) (i32.const 0x203f)) (call $within (local.get $cp) (i32.const 0x2190) (i32.const 0x2328)))
              (i32.or (call $within (local.get $cp) (i32.const 0x232b) (i32.const 0x245f)) (call $within (local.get $cp) (i32.const 0x2500) (i32.const 0x27bf))))
            (i32.or
              (i32.or
                (i32.or (call $within (local.get $cp) (i32.const 0x3000) (i32.const 0x3029)) (call $within (local.get $cp) (i32.const 0x3030) (i32.const 0x3098)))
                (i32.or (call $within (local.get $cp) (i32.const 0x309b) (i32.const 0x30ff)) (call $within (local.get $cp) (i32.const 0x3400) (i32.const 0x9fff))))
              (i32.or
                (call $within (local.get $cp) (i32.const 0xac00) (i32.const 0xd7a3))
                (i32.or (call $within (local.get $cp) (i32.const 0xff01) (i32.const 0xff20)) (call $within (local.get $cp) (i32.const 0xff3b) (i32.const 0xffef))))))))))
    (if (i32.eq (local.get $c0) (i32.const 0xf0))
      (then
        (if (i32.ge_u (i32.add (local.get $p) (i32.const 3)) (local.get $end)) (then (return (i32.const 0))))
        (local.set $c1 (i32.load8_u (i32.add (local.get $p) (i32.const 1))))
        (local.set $c2 (i32.load8_u (i32.add (local.get $p) (i32.const 2))))
        (local.set $c3 (i32.load8_u (i32.add (local.get $p) (i32.const 3))))
        ;; F0 9F 80–AB xx: U+1F000–1FAFF.
        (return (select (i32.const 4) (i32.const 0)
          (i32.and
            (i32.and (i32.eq (local.get $c1) (i32.const 0x9f)) (i32.le_u (i32.sub (local.get $c2) (i32.const 0x80)) (i32.const 0x2b)))
            (i32.eq (i32.and (local.get $c3) (i32.const 0xc0)) (i32.const 0x80)))))))
    (i32.const 0))

  (func $within (param $v i32) (param $low i32) (param $high i32) (result i32)
    (i32.le_u (i32.sub (local.get $v) (local.get $low)) (i32.sub (local.get $high) (local.get $low))))

  ;; invariant_bytes(p, mask, end): whether each byte beyond ASCII at `p` + a set bit of `mask` is part
  ;; of a character `$invariant` accepts (one that began before is known by `$checked_to`).
  (func $invariant_bytes (param $p i32) (param $mask i32) (param $end i32) (result i32)
    (local $at i32)
    (local $length i32)
    (block $done
      (loop $bytes
        (br_if $done (i32.eqz (local.get $mask)))
        (local.set $at (i32.add (local.get $p) (i32.ctz (local.get $mask))))
        (if (i32.ge_u (local.get $at) (global.get $checked_to))
          (then
            (local.set $length (call $invariant (local.get $at) (local.get $end)))
            (if (i32.eqz (local.get $length)) (then (return (i32.const 0))))
            (global.set $checked_to (i32.add (local.get $at) (local.get $length)))))
        (local.set $mask (i32.and (local.get $mask) (i32.sub (local.get $mask) (i32.const 1))))
        (br $bytes)))
    (i32.const 1))

  ;; unescape_fold(p, end, o, f): `p` is the byte after a JSON string's opening quote. Writes the
  ;; string's UTF-8 (escapes undone) at `o`, and the same bytes with A–Z lowered at `f`, which is the
  ;; string folded as search folds it (`fold.ts`) when every character beyond ASCII is one folding
  ;; leaves alone (`$invariant`); sets `high` when one is not (the caller folds that text itself). Returns how many bytes it wrote to each, or -1 when the
  ;; string is not valid JSON before `end` (a control byte, an unknown escape, a `\u` without four hex
  ;; digits, no closing quote), -2 for a `\u` escape of a character at or above U+0080 (the caller
  ;; parses that string itself). Plain bytes go sixteen at a time: each block is stored whole (up to
  ;; fifteen bytes past the end of what is written: the caller leaves room) and counted up to its
  ;; first quote, backslash or control byte.
  (func (export "unescape_fold") (param $p i32) (param $end i32) (param $o i32) (param $f i32) (result i32)
    (local $start i32)
    (local $v v128)
    (local $mask i32)
    (local $n i32)
    (local $c i32)
    (local $hi i32)
    (local $k i32)
    (local $h i32)
    (local $u i32)
    (local.set $start (local.get $o))
    (global.set $checked_to (i32.const 0))
    (loop $runs
      (block $blocks_done
        (loop $blocks
          (br_if $blocks_done (i32.gt_s (i32.add (local.get $p) (i32.const 16)) (local.get $end)))
          (local.set $v (v128.load (local.get $p)))
          (local.set $mask
            (i8x16.bitmask
              (v128.or
                (v128.or
                  (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x22)))
                  (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x5c))))
                (i8x16.lt_u (local.get $v) (i8x16.splat (i32.const 0x20))))))
          (v128.store (local.get $o) (local.get $v))
          (v128.store (local.get $f)
            (v128.or (local.get $v)
              (v128.and
                (v128.and
                  (i8x16.ge_u (local.get $v) (i8x16.splat (i32.const 0x41)))
                  (i8x16.le_u (local.get $v) (i8x16.splat (i32.const 0x5a))))
                (i8x16.splat (i32.const 0x20)))))
          ;; (`i8x16.bitmask` of the bytes themselves: their top bits, set for bytes at or above 0x80.)
          (if (local.get $mask)
            (then
              (local.set $n (i32.ctz (local.get $mask)))
              (local.set $mask (i32.and (i8x16.bitmask (local.get $v)) (i32.sub (i32.shl (i32.const 1) (local.get $n)) (i32.const 1))))
              (if (i32.and (i32.ne (local.get $mask) (i32.const 0)) (i32.eqz (local.get $hi)))
                (then (local.set $hi (i32.eqz (call $invariant_bytes (local.get $p) (local.get $mask) (local.get $end))))))
              (local.set $p (i32.add (local.get $p) (local.get $n)))
              (local.set $o (i32.add (local.get $o) (local.get $n)))
              (local.set $f (i32.add (local.get $f) (local.get $n)))
              (br $blocks_done)))
          (local.set $mask (i8x16.bitmask (local.get $v)))
          (if (i32.and (i32.ne (local.get $mask) (i32.const 0)) (i32.eqz (local.get $hi)))
            (then (local.set $hi (i32.eqz (call $invariant_bytes (local.get $p) (local.get $mask) (local.get $end))))))
          (local.set $p (i32.add (local.get $p) (i32.const 16)))
          (local.set $o (i32.add (local.get $o) (i32.const 16)))
          (local.set $f (i32.add (local.get $f) (i32.const 16)))
          (br $blocks)))
      ;; One byte: where a block stopped, or one of the last fifteen before `end`.
      (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const -1))))
      (local.set $c (i32.load8_u (local.get $p)))
      (if (i32.eq (local.get $c) (i32.const 0x22))
        (then
          (global.set $high (i32.ne (local.get $hi) (i32.const 0)))
          (return (i32.sub (local.get $o) (local.get $start)))))
      (if (i32.lt_u (local.get $c) (i32.const 0x20)) (then (return (i32.const -1))))
      (if (i32.eq (local.get $c) (i32.const 0x5c))
        (then
          (if (i32.ge_u (i32.add (local.get $p) (i32.const 1)) (local.get $end)) (then (return (i32.const -1))))
          (local.set $c (i32.load8_u (i32.add (local.get $p) (i32.const 1))))
          (local.set $p (i32.add (local.get $p) (i32.const 2)))
          (block $undone
            (if (i32.eq (local.get $c) (i32.const 0x6e)) (then (local.set $c (i32.const 0x0a)) (br $undone)))
            (if (i32.or
                  (i32.or (i32.eq (local.get $c) (i32.const 0x22)) (i32.eq (local.get $c) (i32.const 0x5c)))
                  (i32.eq (local.get $c) (i32.const 0x2f)))
              (then (br $undone)))
            (if (i32.eq (local.get $c) (i32.const 0x74)) (then (local.set $c (i32.const 0x09)) (br $undone)))
            (if (i32.eq (local.get $c) (i32.const 0x72)) (then (local.set $c (i32.const 0x0d)) (br $undone)))
            (if (i32.eq (local.get $c) (i32.const 0x62)) (then (local.set $c (i32.const 0x08)) (br $undone)))
            (if (i32.eq (local.get $c) (i32.const 0x66)) (then (local.set $c (i32.const 0x0c)) (br $undone)))
            (if (i32.ne (local.get $c) (i32.const 0x75)) (then (return (i32.const -1))))
            ;; \u and four hex digits.
            (if (i32.gt_u (i32.add (local.get $p) (i32.const 4)) (local.get $end)) (then (return (i32.const -1))))
            (local.set $u (i32.const 0))
            (local.set $k (i32.const 0))
            (loop $hex
              (local.set $h (i32.load8_u (i32.add (local.get $p) (local.get $k))))
              (if (i32.le_u (i32.sub (local.get $h) (i32.const 0x30)) (i32.const 9))
                (then (local.set $h (i32.sub (local.get $h) (i32.const 0x30))))
                (else
                  ;; a–f or A–F (the 0x20 bit lowers a letter).
                  (if (i32.le_u (i32.sub (i32.or (local.get $h) (i32.const 0x20)) (i32.const 0x61)) (i32.const 5))
                    (then (local.set $h (i32.sub (i32.or (local.get $h) (i32.const 0x20)) (i32.const 0x57))))
                    (else (return (i32.const -1))))))
              (local.set $u (i32.or (i32.shl (local.get $u) (i32.const 4)) (local.get $h)))
              (local.set $k (i32.add (local.get $k) (i32.const 1)))
              (br_if $hex (i32.lt_u (local.get $k) (i32.const 4))))
            (if (i32.ge_u (local.get $u) (i32.const 0x80)) (then (return (i32.const -2))))
            (local.set $p (i32.add (local.get $p) (i32.const 4)))
            (local.set $c (local.get $u)))
          (i32.store8 (local.get $o) (local.get $c))
          (i32.store8 (local.get $f) (i32.or (local.get $c) (i32.shl (i32.le_u (i32.sub (local.get $c) (i32.const 0x41)) (i32.const 25)) (i32.const 5))))
          (local.set $o (i32.add (local.get $o) (i32.const 1)))
          (local.set $f (i32.add (local.get $f) (i32.const 1)))
          (br $runs)))
      ;; A plain byte (one of the last fifteen).
      (i32.store8 (local.get $o) (local.get $c))
      (i32.store8 (local.get $f) (i32.or (local.get $c) (i32.shl (i32.le_u (i32.sub (local.get $c) (i32.const 0x41)) (i32.const 25)) (i32.const 5))))
      (if (i32.and (i32.ge_u (local.get $c) (i32.const 0x80)) (i32.eqz (local.get $hi)))
        (then (local.set $hi (i32.eqz (call $invariant_bytes (local.get $p) (i32.const 1) (local.get $end))))))
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (local.set $o (i32.add (local.get $o) (i32.const 1)))
      (local.set $f (i32.add (local.get $f) (i32.const 1)))
      (br $runs))
    (i32.const -1))
)
