;; The byte searches of `byteSearch.ts`, in WebAssembly text. `node scripts/byte-search-wasm.mjs` compiles it
;; (wabt) into `byteSearchModule.ts`; a test checks that the two still agree.
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
  (func (export "string_end") (param $p i32) (param $end i32) (result i32)
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
    (i32.const -1)))
