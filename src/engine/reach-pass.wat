;; One pass of the dense phase of blocking counts (see reach-pass.ts, which embeds the
;; assembled bytes): up to 512 source tasks at once, one bit (lane) each, so a task's
;; lanes fill one 64-byte cache line, read with four v128 loads per predecessor.
;; Walking positions upward, every task gathers from its predecessors the lanes of the
;; sources that reach it (plus its own lane if it is a source). Every 240 tasks, the open
;; ones just gathered are counted, eight at a time through a carry-save adder tree
;; (Harley-Seal), one quarter of the lanes at a time, into 512 bit-sliced counters.
;; A source's own lane is counted too when it is open: the caller takes it off.
;;
;; Memory, all addresses in bytes (reach-pass.ts lays it out):
;;   out[v]       64 bytes per position (+1, kept zero): lanes of the sources reaching v
;;   starts[v]    i32 per position (+1): address of v's first entry in preds
;;   preds[k]     i32: address of out[p] for a predecessor p
;;   opens[i]     i32: the open (unfinished) positions, ascending, then 7 times n
;;   sources[l]   i32: position of lane l's source, ascending, then a sentinel >= n
;;   lanes[l]     64 bytes with only bit l set
;;   planes[q][b] v128: bit b of each count of quarter q's lanes (4 x 32 planes, zeroed
;;                by the caller)
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

  ;; Positions $v (the first source) to $n - 1; $o: address of the first entry of opens
  ;; at or after $v. Positions below $v must hold zero in out.
  (func (export "pass")
    (param $v i32) (param $n i32) (param $starts i32) (param $out i32)
    (param $sources i32) (param $lanes i32) (param $planes i32) (param $o i32)
    (local $k i32) (local $end i32) (local $next i32) (local $stop i32) (local $a i32)
    (local $q i32) (local $i i32) (local $e i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $x0 v128) (local $x1 v128) (local $u v128) (local $t v128)
    (local $ta v128) (local $tb v128) (local $fa v128) (local $fb v128)
    ;; counts of weight 1, 2, 4, then 8 c3 + 16 c4 + ... + 128 c7: 255 at most
    (local $ones v128) (local $twos v128) (local $fours v128)
    (local $c3 v128) (local $c4 v128) (local $c5 v128) (local $c6 v128) (local $c7 v128)
    (local.set $next (i32.load (local.get $sources)))
    (loop $chunk
      ;; Gather up to 240 tasks: with fewer than 8 open ones left over from the last
      ;; chunk, at most 31 groups of 8 follow, so the register counts cannot overflow.
      (local.set $stop (select (i32.add (local.get $v) (i32.const 240)) (local.get $n)
        (i32.lt_u (i32.add (local.get $v) (i32.const 240)) (local.get $n))))
      (loop $task
        (local.set $a0 (v128.const i64x2 0 0))
        (local.set $a1 (v128.const i64x2 0 0))
        (local.set $a2 (v128.const i64x2 0 0))
        (local.set $a3 (v128.const i64x2 0 0))
        (local.set $k (i32.load (i32.add (local.get $starts) (i32.shl (local.get $v) (i32.const 2)))))
        (local.set $end (i32.load offset=4 (i32.add (local.get $starts) (i32.shl (local.get $v) (i32.const 2)))))
        (block $gathered
          (loop $pred
            (br_if $gathered (i32.ge_u (local.get $k) (local.get $end)))
            (local.set $a (i32.load (local.get $k)))
            (local.set $a0 (v128.or (local.get $a0) (v128.load (local.get $a))))
            (local.set $a1 (v128.or (local.get $a1) (v128.load offset=16 (local.get $a))))
            (local.set $a2 (v128.or (local.get $a2) (v128.load offset=32 (local.get $a))))
            (local.set $a3 (v128.or (local.get $a3) (v128.load offset=48 (local.get $a))))
            (local.set $k (i32.add (local.get $k) (i32.const 4)))
            (br $pred)))
        (if (i32.eq (local.get $v) (local.get $next))
          (then
            (local.set $a0 (v128.or (local.get $a0) (v128.load (local.get $lanes))))
            (local.set $a1 (v128.or (local.get $a1) (v128.load offset=16 (local.get $lanes))))
            (local.set $a2 (v128.or (local.get $a2) (v128.load offset=32 (local.get $lanes))))
            (local.set $a3 (v128.or (local.get $a3) (v128.load offset=48 (local.get $lanes))))
            (local.set $lanes (i32.add (local.get $lanes) (i32.const 64)))
            (local.set $sources (i32.add (local.get $sources) (i32.const 4)))
            (local.set $next (i32.load (local.get $sources)))))
        (local.set $a (i32.add (local.get $out) (i32.shl (local.get $v) (i32.const 6))))
        (v128.store (local.get $a) (local.get $a0))
        (v128.store offset=16 (local.get $a) (local.get $a1))
        (v128.store offset=32 (local.get $a) (local.get $a2))
        (v128.store offset=48 (local.get $a) (local.get $a3))
        (local.set $v (i32.add (local.get $v) (i32.const 1)))
        (br_if $task (i32.lt_u (local.get $v) (local.get $stop))))
      ;; The open positions gathered so far: up to the first at or after $v (the padding
      ;; n stops the scan), in whole groups of 8, or padded to one at the end of the walk.
      (local.set $e (local.get $o))
      (block $scanned
        (loop $scan
          (br_if $scanned (i32.ge_u (i32.load (local.get $e)) (local.get $v)))
          (local.set $e (i32.add (local.get $e) (i32.const 4)))
          (br $scan)))
      (local.set $e (i32.add (local.get $o)
        (i32.and
          (select (i32.add (i32.sub (local.get $e) (local.get $o)) (i32.const 31))
            (i32.sub (local.get $e) (local.get $o))
            (i32.ge_u (local.get $v) (local.get $n)))
          (i32.const -32))))
      (local.set $q (i32.const 0))
      (loop $quarter
        (local.set $ones (v128.const i64x2 0 0))
        (local.set $twos (v128.const i64x2 0 0))
        (local.set $fours (v128.const i64x2 0 0))
        (local.set $c3 (v128.const i64x2 0 0))
        (local.set $c4 (v128.const i64x2 0 0))
        (local.set $c5 (v128.const i64x2 0 0))
        (local.set $c6 (v128.const i64x2 0 0))
        (local.set $c7 (v128.const i64x2 0 0))
        (local.set $a (i32.add (local.get $out) (local.get $q)))
        (local.set $i (local.get $o))
        (block $counted
          (loop $group
            (br_if $counted (i32.ge_u (local.get $i) (local.get $e)))
            ;; Each carry-save step: (carry, sum) of three inputs of one weight.
            (local.set $x0 (v128.load (i32.add (local.get $a) (i32.shl (i32.load (local.get $i)) (i32.const 6)))))
            (local.set $x1 (v128.load (i32.add (local.get $a) (i32.shl (i32.load offset=4 (local.get $i)) (i32.const 6)))))
            (local.set $u (v128.xor (local.get $ones) (local.get $x0)))
            (local.set $ta (v128.or (v128.and (local.get $ones) (local.get $x0)) (v128.and (local.get $u) (local.get $x1))))
            (local.set $ones (v128.xor (local.get $u) (local.get $x1)))
            (local.set $x0 (v128.load (i32.add (local.get $a) (i32.shl (i32.load offset=8 (local.get $i)) (i32.const 6)))))
            (local.set $x1 (v128.load (i32.add (local.get $a) (i32.shl (i32.load offset=12 (local.get $i)) (i32.const 6)))))
            (local.set $u (v128.xor (local.get $ones) (local.get $x0)))
            (local.set $tb (v128.or (v128.and (local.get $ones) (local.get $x0)) (v128.and (local.get $u) (local.get $x1))))
            (local.set $ones (v128.xor (local.get $u) (local.get $x1)))
            (local.set $u (v128.xor (local.get $twos) (local.get $ta)))
            (local.set $fa (v128.or (v128.and (local.get $twos) (local.get $ta)) (v128.and (local.get $u) (local.get $tb))))
            (local.set $twos (v128.xor (local.get $u) (local.get $tb)))
            (local.set $x0 (v128.load (i32.add (local.get $a) (i32.shl (i32.load offset=16 (local.get $i)) (i32.const 6)))))
            (local.set $x1 (v128.load (i32.add (local.get $a) (i32.shl (i32.load offset=20 (local.get $i)) (i32.const 6)))))
            (local.set $u (v128.xor (local.get $ones) (local.get $x0)))
            (local.set $ta (v128.or (v128.and (local.get $ones) (local.get $x0)) (v128.and (local.get $u) (local.get $x1))))
            (local.set $ones (v128.xor (local.get $u) (local.get $x1)))
            (local.set $x0 (v128.load (i32.add (local.get $a) (i32.shl (i32.load offset=24 (local.get $i)) (i32.const 6)))))
            (local.set $x1 (v128.load (i32.add (local.get $a) (i32.shl (i32.load offset=28 (local.get $i)) (i32.const 6)))))
            (local.set $u (v128.xor (local.get $ones) (local.get $x0)))
            (local.set $tb (v128.or (v128.and (local.get $ones) (local.get $x0)) (v128.and (local.get $u) (local.get $x1))))
            (local.set $ones (v128.xor (local.get $u) (local.get $x1)))
            (local.set $u (v128.xor (local.get $twos) (local.get $ta)))
            (local.set $fb (v128.or (v128.and (local.get $twos) (local.get $ta)) (v128.and (local.get $u) (local.get $tb))))
            (local.set $twos (v128.xor (local.get $u) (local.get $tb)))
            (local.set $u (v128.xor (local.get $fours) (local.get $fa)))
            (local.set $x0 (v128.or (v128.and (local.get $fours) (local.get $fa)) (v128.and (local.get $u) (local.get $fb))))
            (local.set $fours (v128.xor (local.get $u) (local.get $fb)))
            ;; $x0: the eights, rippled into c3 ... c7
            (local.set $t (v128.and (local.get $c3) (local.get $x0)))
            (local.set $c3 (v128.xor (local.get $c3) (local.get $x0)))
            (local.set $x0 (v128.and (local.get $c4) (local.get $t)))
            (local.set $c4 (v128.xor (local.get $c4) (local.get $t)))
            (local.set $t (v128.and (local.get $c5) (local.get $x0)))
            (local.set $c5 (v128.xor (local.get $c5) (local.get $x0)))
            (local.set $x0 (v128.and (local.get $c6) (local.get $t)))
            (local.set $c6 (v128.xor (local.get $c6) (local.get $t)))
            (local.set $c7 (v128.xor (local.get $c7) (local.get $x0)))
            (local.set $i (i32.add (local.get $i) (i32.const 32)))
            (br $group)))
        ;; Flush into quarter q's planes, plane b taking weight 2^b.
        (local.set $a (i32.add (local.get $planes) (i32.shl (local.get $q) (i32.const 5))))
        (call $add (local.get $a) (local.get $ones))
        (call $add (i32.add (local.get $a) (i32.const 16)) (local.get $twos))
        (call $add (i32.add (local.get $a) (i32.const 32)) (local.get $fours))
        (call $add (i32.add (local.get $a) (i32.const 48)) (local.get $c3))
        (call $add (i32.add (local.get $a) (i32.const 64)) (local.get $c4))
        (call $add (i32.add (local.get $a) (i32.const 80)) (local.get $c5))
        (call $add (i32.add (local.get $a) (i32.const 96)) (local.get $c6))
        (call $add (i32.add (local.get $a) (i32.const 112)) (local.get $c7))
        (local.set $q (i32.add (local.get $q) (i32.const 16)))
        (br_if $quarter (i32.lt_u (local.get $q) (i32.const 64))))
      (local.set $o (local.get $e))
      (br_if $chunk (i32.lt_u (local.get $v) (local.get $n))))))
