;; One pass of the dense phase of blocking counts (see reach-pass.ts, which embeds the
;; assembled bytes): up to 128 source tasks at once, one bit (lane) each in a v128.
;; Walking positions upward, every task gathers from its predecessors the lanes of the
;; sources that reach it, and every open task adds its lanes to 128 running counts.
;;
;; Memory, all addresses in bytes (reach-pass.ts lays it out):
;;   out[v]       v128 per position: lanes of the sources reaching v, plus v's own lane
;;   starts[v]    i32 per position (+1): address of v's first entry in preds
;;   preds[k]     i32: address of out[p] for a predecessor p
;;   open[v]      u8: 0xff unfinished, 0 done
;;   sources[l]   i32: position of lane l's source, ascending, then a sentinel >= n
;;   lanes[l]     v128 with only bit l set
;;   planes[b]    v128: bit b of each lane's count (32 planes, zeroed by the caller)
(module
  (import "env" "memory" (memory 0))

  ;; planes from $p upward += $x: add $x to one plane and carry the overflow up.
  (func $add (param $p i32) (param $x v128)
    (local $c v128)
    (loop $carry
      (local.set $c (v128.load (local.get $p)))
      (v128.store (local.get $p) (v128.xor (local.get $c) (local.get $x)))
      (local.set $x (v128.and (local.get $c) (local.get $x)))
      (local.set $p (i32.add (local.get $p) (i32.const 16)))
      (br_if $carry (v128.any_true (local.get $x)))))

  ;; Positions $v (the first source) to $n - 1. Positions below $v must hold zero in out.
  (func (export "pass")
    (param $v i32) (param $n i32) (param $starts i32) (param $open i32)
    (param $out i32) (param $sources i32) (param $lanes i32) (param $planes i32)
    (local $k i32) (local $end i32) (local $next i32) (local $stop i32)
    (local $acc v128) (local $t v128) (local $u v128)
    ;; an 8-bit count per lane kept in registers: c0 + 2 c1 + 4 c2 + ... + 128 c7
    (local $c0 v128) (local $c1 v128) (local $c2 v128) (local $c3 v128)
    (local $c4 v128) (local $c5 v128) (local $c6 v128) (local $c7 v128)
    (local.set $next (i32.load (local.get $sources)))
    (loop $chunk
      ;; At most 255 tasks per chunk, so the register counts cannot overflow; no call
      ;; inside the task loop either, so they stay in registers.
      (local.set $stop (select (i32.add (local.get $v) (i32.const 255)) (local.get $n)
        (i32.lt_u (i32.add (local.get $v) (i32.const 255)) (local.get $n))))
      (loop $task
        ;; acc = OR of out[p] over v's predecessors
        (local.set $acc (v128.const i64x2 0 0))
        (local.set $k (i32.load (i32.add (local.get $starts) (i32.shl (local.get $v) (i32.const 2)))))
        (local.set $end (i32.load offset=4 (i32.add (local.get $starts) (i32.shl (local.get $v) (i32.const 2)))))
        (block $gathered
          (loop $pred
            (br_if $gathered (i32.ge_u (local.get $k) (local.get $end)))
            (local.set $acc (v128.or (local.get $acc) (v128.load (i32.load (local.get $k)))))
            (local.set $k (i32.add (local.get $k) (i32.const 4)))
            (br $pred)))
        ;; Count acc if v is open (branch-free: done tasks add zero), rippling the carry.
        (local.set $t (v128.and (local.get $acc)
          (i8x16.splat (i32.load8_u (i32.add (local.get $open) (local.get $v))))))
        (local.set $u (v128.and (local.get $c0) (local.get $t)))
        (local.set $c0 (v128.xor (local.get $c0) (local.get $t)))
        (local.set $t (v128.and (local.get $c1) (local.get $u)))
        (local.set $c1 (v128.xor (local.get $c1) (local.get $u)))
        (local.set $u (v128.and (local.get $c2) (local.get $t)))
        (local.set $c2 (v128.xor (local.get $c2) (local.get $t)))
        (local.set $t (v128.and (local.get $c3) (local.get $u)))
        (local.set $c3 (v128.xor (local.get $c3) (local.get $u)))
        (local.set $u (v128.and (local.get $c4) (local.get $t)))
        (local.set $c4 (v128.xor (local.get $c4) (local.get $t)))
        (local.set $t (v128.and (local.get $c5) (local.get $u)))
        (local.set $c5 (v128.xor (local.get $c5) (local.get $u)))
        (local.set $u (v128.and (local.get $c6) (local.get $t)))
        (local.set $c6 (v128.xor (local.get $c6) (local.get $t)))
        (local.set $c7 (v128.xor (local.get $c7) (local.get $u)))
        ;; A source adds its own lane after counting: a task does not block itself.
        (if (i32.eq (local.get $v) (local.get $next))
          (then
            (local.set $acc (v128.or (local.get $acc) (v128.load (local.get $lanes))))
            (local.set $lanes (i32.add (local.get $lanes) (i32.const 16)))
            (local.set $sources (i32.add (local.get $sources) (i32.const 4)))
            (local.set $next (i32.load (local.get $sources)))))
        (v128.store (i32.add (local.get $out) (i32.shl (local.get $v) (i32.const 4))) (local.get $acc))
        (local.set $v (i32.add (local.get $v) (i32.const 1)))
        (br_if $task (i32.lt_u (local.get $v) (local.get $stop))))
      ;; Flush the register counts into the planes, plane b taking weight 2^b.
      (call $add (local.get $planes) (local.get $c0))
      (call $add (i32.add (local.get $planes) (i32.const 16)) (local.get $c1))
      (call $add (i32.add (local.get $planes) (i32.const 32)) (local.get $c2))
      (call $add (i32.add (local.get $planes) (i32.const 48)) (local.get $c3))
      (call $add (i32.add (local.get $planes) (i32.const 64)) (local.get $c4))
      (call $add (i32.add (local.get $planes) (i32.const 80)) (local.get $c5))
      (call $add (i32.add (local.get $planes) (i32.const 96)) (local.get $c6))
      (call $add (i32.add (local.get $planes) (i32.const 112)) (local.get $c7))
      (local.set $c0 (v128.const i64x2 0 0))
      (local.set $c1 (v128.const i64x2 0 0))
      (local.set $c2 (v128.const i64x2 0 0))
      (local.set $c3 (v128.const i64x2 0 0))
      (local.set $c4 (v128.const i64x2 0 0))
      (local.set $c5 (v128.const i64x2 0 0))
      (local.set $c6 (v128.const i64x2 0 0))
      (local.set $c7 (v128.const i64x2 0 0))
      (br_if $chunk (i32.lt_u (local.get $v) (local.get $n))))))
