;; Squared L2 distances between one 8-bit query and a block of 8-bit vectors, 16 lanes at a time
;; (WebAssembly SIMD). Compiled into int8-l2.wasm by `node scripts/build-wasm.mjs`; int8-l2.ts runs it.
;;
;; l2sq(q, mask, base, n, dims, out): for j < n,
;;   out[j] (i32) = sum over d < dims of (q[d] - base[j * dims + d])^2
;; q holds dims bytes padded with zeros to a multiple of 16. When dims is not a multiple of 16, the
;; last 16-byte load of a vector also reads the start of the next one (or up to 15 bytes past the
;; block, which the caller keeps inside memory): mask (16 bytes, 0xff for the dims % 16 valid bytes)
;; clears them. Differences fit in i16 (|a - b| <= 255) and dot_i16x8_s sums their squares exactly.
;; Vectors are taken two at a time: each 16 bytes of the query are loaded and widened once for both,
;; and the two sums are independent (a sixth less time than one at a time); an odd last vector
;; is taken alone.
;; The memory is given by the caller and shared (int8-l2.ts): a thread's own, into which it copies
;; the vectors, or one holding the vectors of a version that the retrieval workers share and scan
;; where they lie (server/search/shared-vectors.ts).
(module
  (import "env" "memory" (memory 1 65536 shared))
  (func (export "l2sq")
    (param $q i32) (param $mask i32) (param $base i32) (param $n i32) (param $dims i32) (param $out i32)
    (local $j i32) (local $d i32) (local $full i32) (local $v i32) (local $w i32)
    (local $acc v128) (local $acc2 v128) (local $a v128) (local $alo v128) (local $ahi v128)
    (local $b v128) (local $lo v128) (local $hi v128) (local $m v128)
    (local.set $full (i32.and (local.get $dims) (i32.const -16)))
    (local.set $m (v128.load (local.get $mask)))
    ;; Pairs: vectors j and j + 1.
    (block $pairs_done
      (loop $pair
        (br_if $pairs_done (i32.ge_u (i32.add (local.get $j) (i32.const 1)) (local.get $n)))
        (local.set $v (i32.add (local.get $base) (i32.mul (local.get $j) (local.get $dims))))
        (local.set $w (i32.add (local.get $v) (local.get $dims)))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $acc2 (v128.const i32x4 0 0 0 0))
        (local.set $d (i32.const 0))
        (block $tail
          (loop $lanes
            (br_if $tail (i32.ge_u (local.get $d) (local.get $full)))
            (local.set $a (v128.load (i32.add (local.get $q) (local.get $d))))
            (local.set $alo (i16x8.extend_low_i8x16_s (local.get $a)))
            (local.set $ahi (i16x8.extend_high_i8x16_s (local.get $a)))
            (local.set $b (v128.load (i32.add (local.get $v) (local.get $d))))
            (local.set $acc
              (i32x4.add (local.get $acc)
                (i32x4.add
                  (i32x4.dot_i16x8_s (local.tee $lo (i16x8.sub (local.get $alo) (i16x8.extend_low_i8x16_s (local.get $b)))) (local.get $lo))
                  (i32x4.dot_i16x8_s (local.tee $hi (i16x8.sub (local.get $ahi) (i16x8.extend_high_i8x16_s (local.get $b)))) (local.get $hi)))))
            (local.set $b (v128.load (i32.add (local.get $w) (local.get $d))))
            (local.set $acc2
              (i32x4.add (local.get $acc2)
                (i32x4.add
                  (i32x4.dot_i16x8_s (local.tee $lo (i16x8.sub (local.get $alo) (i16x8.extend_low_i8x16_s (local.get $b)))) (local.get $lo))
                  (i32x4.dot_i16x8_s (local.tee $hi (i16x8.sub (local.get $ahi) (i16x8.extend_high_i8x16_s (local.get $b)))) (local.get $hi)))))
            (local.set $d (i32.add (local.get $d) (i32.const 16)))
            (br $lanes)))
        (if (i32.lt_u (local.get $full) (local.get $dims))
          (then
            (local.set $a (v128.load (i32.add (local.get $q) (local.get $full))))
            (local.set $alo (i16x8.extend_low_i8x16_s (local.get $a)))
            (local.set $ahi (i16x8.extend_high_i8x16_s (local.get $a)))
            (local.set $b (v128.and (v128.load (i32.add (local.get $v) (local.get $full))) (local.get $m)))
            (local.set $acc
              (i32x4.add (local.get $acc)
                (i32x4.add
                  (i32x4.dot_i16x8_s (local.tee $lo (i16x8.sub (local.get $alo) (i16x8.extend_low_i8x16_s (local.get $b)))) (local.get $lo))
                  (i32x4.dot_i16x8_s (local.tee $hi (i16x8.sub (local.get $ahi) (i16x8.extend_high_i8x16_s (local.get $b)))) (local.get $hi)))))
            (local.set $b (v128.and (v128.load (i32.add (local.get $w) (local.get $full))) (local.get $m)))
            (local.set $acc2
              (i32x4.add (local.get $acc2)
                (i32x4.add
                  (i32x4.dot_i16x8_s (local.tee $lo (i16x8.sub (local.get $alo) (i16x8.extend_low_i8x16_s (local.get $b)))) (local.get $lo))
                  (i32x4.dot_i16x8_s (local.tee $hi (i16x8.sub (local.get $ahi) (i16x8.extend_high_i8x16_s (local.get $b)))) (local.get $hi)))))))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 2))) (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
            (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
        (i32.store (i32.add (local.get $out) (i32.shl (i32.add (local.get $j) (i32.const 1)) (i32.const 2))) (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $acc2)) (i32x4.extract_lane 1 (local.get $acc2)))
            (i32.add (i32x4.extract_lane 2 (local.get $acc2)) (i32x4.extract_lane 3 (local.get $acc2)))))
        (local.set $j (i32.add (local.get $j) (i32.const 2)))
        (br $pair)))
    ;; An odd last vector.
    (if (i32.lt_u (local.get $j) (local.get $n))
      (then
        (local.set $v (i32.add (local.get $base) (i32.mul (local.get $j) (local.get $dims))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $d (i32.const 0))
        (block $tail1
          (loop $lanes1
            (br_if $tail1 (i32.ge_u (local.get $d) (local.get $full)))
            (local.set $a (v128.load (i32.add (local.get $q) (local.get $d))))
            (local.set $alo (i16x8.extend_low_i8x16_s (local.get $a)))
            (local.set $ahi (i16x8.extend_high_i8x16_s (local.get $a)))
            (local.set $b (v128.load (i32.add (local.get $v) (local.get $d))))
            (local.set $acc
              (i32x4.add (local.get $acc)
                (i32x4.add
                  (i32x4.dot_i16x8_s (local.tee $lo (i16x8.sub (local.get $alo) (i16x8.extend_low_i8x16_s (local.get $b)))) (local.get $lo))
                  (i32x4.dot_i16x8_s (local.tee $hi (i16x8.sub (local.get $ahi) (i16x8.extend_high_i8x16_s (local.get $b)))) (local.get $hi)))))
            (local.set $d (i32.add (local.get $d) (i32.const 16)))
            (br $lanes1)))
        (if (i32.lt_u (local.get $full) (local.get $dims))
          (then
            (local.set $a (v128.load (i32.add (local.get $q) (local.get $full))))
            (local.set $alo (i16x8.extend_low_i8x16_s (local.get $a)))
            (local.set $ahi (i16x8.extend_high_i8x16_s (local.get $a)))
            (local.set $b (v128.and (v128.load (i32.add (local.get $v) (local.get $full))) (local.get $m)))
            (local.set $acc
              (i32x4.add (local.get $acc)
                (i32x4.add
                  (i32x4.dot_i16x8_s (local.tee $lo (i16x8.sub (local.get $alo) (i16x8.extend_low_i8x16_s (local.get $b)))) (local.get $lo))
                  (i32x4.dot_i16x8_s (local.tee $hi (i16x8.sub (local.get $ahi) (i16x8.extend_high_i8x16_s (local.get $b)))) (local.get $hi)))))))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 2))) (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
            (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))))))
