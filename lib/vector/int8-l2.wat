;; Squared L2 distances between one 8-bit query and a block of 8-bit vectors, 16 lanes at a time
;; (WebAssembly SIMD). Compiled into int8-l2.wasm by `node scripts/build-wasm.mjs`; int8-l2.ts runs it.
;;
;; l2sq(q, mask, base, n, dims, out): for j < n,
;;   out[j] (i32) = sum over d < dims of (q[d] - base[j * dims + d])^2
;; q holds dims bytes padded with zeros to a multiple of 16. When dims is not a multiple of 16, the
;; last 16-byte load of a vector also reads the start of the next one (or up to 15 bytes past the
;; block, which the caller keeps inside memory): mask (16 bytes, 0xff for the dims % 16 valid bytes)
;; clears them. Differences fit in i16 (|a - b| <= 255) and dot_i16x8_s sums their squares exactly.
;; The memory is given by the caller and shared (int8-l2.ts): a thread's own, into which it copies
;; the vectors, or one holding the vectors of a version that the retrieval workers share and scan
;; where they lie (server/search/shared-vectors.ts).
(module
  (import "env" "memory" (memory 1 65536 shared))
  (func (export "l2sq")
    (param $q i32) (param $mask i32) (param $base i32) (param $n i32) (param $dims i32) (param $out i32)
    (local $j i32) (local $d i32) (local $full i32) (local $v i32)
    (local $acc v128) (local $a v128) (local $b v128) (local $lo v128) (local $hi v128) (local $m v128)
    (local.set $full (i32.and (local.get $dims) (i32.const -16)))
    (local.set $m (v128.load (local.get $mask)))
    (block $done
      (loop $vector
        (br_if $done (i32.ge_u (local.get $j) (local.get $n)))
        (local.set $v (i32.add (local.get $base) (i32.mul (local.get $j) (local.get $dims))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $d (i32.const 0))
        (block $tail
          (loop $lanes
            (br_if $tail (i32.ge_u (local.get $d) (local.get $full)))
            (local.set $a (v128.load (i32.add (local.get $q) (local.get $d))))
            (local.set $b (v128.load (i32.add (local.get $v) (local.get $d))))
            (local.set $lo (i16x8.sub (i16x8.extend_low_i8x16_s (local.get $a)) (i16x8.extend_low_i8x16_s (local.get $b))))
            (local.set $hi (i16x8.sub (i16x8.extend_high_i8x16_s (local.get $a)) (i16x8.extend_high_i8x16_s (local.get $b))))
            (local.set $acc
              (i32x4.add (local.get $acc)
                (i32x4.add (i32x4.dot_i16x8_s (local.get $lo) (local.get $lo)) (i32x4.dot_i16x8_s (local.get $hi) (local.get $hi)))))
            (local.set $d (i32.add (local.get $d) (i32.const 16)))
            (br $lanes)))
        (if (i32.lt_u (local.get $full) (local.get $dims))
          (then
            (local.set $a (v128.load (i32.add (local.get $q) (local.get $full))))
            (local.set $b (v128.and (v128.load (i32.add (local.get $v) (local.get $full))) (local.get $m)))
            (local.set $lo (i16x8.sub (i16x8.extend_low_i8x16_s (local.get $a)) (i16x8.extend_low_i8x16_s (local.get $b))))
            (local.set $hi (i16x8.sub (i16x8.extend_high_i8x16_s (local.get $a)) (i16x8.extend_high_i8x16_s (local.get $b))))
            (local.set $acc
              (i32x4.add (local.get $acc)
                (i32x4.add (i32x4.dot_i16x8_s (local.get $lo) (local.get $lo)) (i32x4.dot_i16x8_s (local.get $hi) (local.get $hi)))))))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 2)))
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
            (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $vector)))))
