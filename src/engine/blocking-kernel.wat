;; Blocking counts (see blocking.ts for the method, blocking-kernel.ts embeds the assembled
;; bytes). Every loop of the count runs here; JavaScript only lays out memory and copies
;; the graph in and the counts out.
;;
;; Memory: areas that blocking.ts lays out, passed as byte addresses. Tasks are numbered by
;; topological position (successors sit higher) except where "node" is said.
;;   order[i]      node at position i             pos[v]       position of node v
;;   predStart[v], pred[k]: the graph's predecessor rows, by node
;;   progress[v]   u8 progress code, by node      open[i]      u8: 1 unfinished, 0 done
;;   pstart[i], ppos[k]: predecessor rows by position, as positions
;;   sstart[i], sadj[k]: successor rows by position, ascending
;;   counts[i]     i32: open tasks reached, -1 for a dense task
;;   first[i]      i32: where i's list starts in arena (also the fill cursors of prepare)
;;   stamp[x]      i32: x was last listed for this position
;;   arena         i32 lists of open positions
;;   dense[d]      dense positions, ascending
;;   opens[j]      open positions, ascending, then 7 times n
;;   out[i]        64 bytes per position (+1, kept zero): lanes of the sources reaching i
;;   sources[l]    i32: position of lane l's source, ascending, then n
;;   lanes[l]      64 bytes with only bit l set
;;   planes[q][b]  v128: bit b of each count of quarter q's lanes (4 x 32 planes, zeroed
;;                 by the caller before each pass)
(module
  (import "env" "memory" (memory 0))

  ;; Positions, openness, and both rows by position.
  (func (export "prepare")
    (param $n i32) (param $done i32) (param $order i32) (param $predStart i32) (param $pred i32)
    (param $progress i32) (param $pos i32) (param $open i32) (param $pstart i32) (param $ppos i32)
    (param $sstart i32) (param $sadj i32) (param $fill i32)
    (local $i i32) (local $v i32) (local $k i32) (local $end i32) (local $e i32) (local $p i32)
    (block $done1 (loop $each
      (br_if $done1 (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $v (i32.load (i32.add (local.get $order) (i32.shl (local.get $i) (i32.const 2)))))
      (i32.store (i32.add (local.get $pos) (i32.shl (local.get $v) (i32.const 2))) (local.get $i))
      (i32.store8 (i32.add (local.get $open) (local.get $i))
        (i32.ne (i32.load8_u (i32.add (local.get $progress) (local.get $v))) (local.get $done)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $each)))
    ;; Predecessor rows by position; each position's out-degree counted in sstart[p + 1].
    (local.set $i (i32.const 0))
    (block $done2 (loop $row
      (br_if $done2 (i32.ge_u (local.get $i) (local.get $n)))
      (i32.store (i32.add (local.get $pstart) (i32.shl (local.get $i) (i32.const 2))) (local.get $e))
      (local.set $v (i32.shl (i32.load (i32.add (local.get $order) (i32.shl (local.get $i) (i32.const 2)))) (i32.const 2)))
      (local.set $k (i32.load (i32.add (local.get $predStart) (local.get $v))))
      (local.set $end (i32.load offset=4 (i32.add (local.get $predStart) (local.get $v))))
      (block $done3 (loop $edge
        (br_if $done3 (i32.ge_u (local.get $k) (local.get $end)))
        (local.set $p (i32.load (i32.add (local.get $pos)
          (i32.shl (i32.load (i32.add (local.get $pred) (i32.shl (local.get $k) (i32.const 2)))) (i32.const 2)))))
        (i32.store (i32.add (local.get $ppos) (i32.shl (local.get $e) (i32.const 2))) (local.get $p))
        (local.set $p (i32.add (local.get $sstart) (i32.shl (local.get $p) (i32.const 2))))
        (i32.store offset=4 (local.get $p) (i32.add (i32.load offset=4 (local.get $p)) (i32.const 1)))
        (local.set $e (i32.add (local.get $e) (i32.const 1)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $edge)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $row)))
    (i32.store (i32.add (local.get $pstart) (i32.shl (local.get $n) (i32.const 2))) (local.get $e))
    ;; Successor rows: prefix sums, then targets in ascending position fill every row in order.
    (local.set $i (i32.const 0))
    (block $done4 (loop $sum
      (br_if $done4 (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $p (i32.add (local.get $sstart) (i32.shl (local.get $i) (i32.const 2))))
      (i32.store (i32.add (local.get $fill) (i32.shl (local.get $i) (i32.const 2))) (i32.load (local.get $p)))
      (i32.store offset=4 (local.get $p) (i32.add (i32.load offset=4 (local.get $p)) (i32.load (local.get $p))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $sum)))
    (local.set $i (i32.const 0))
    (local.set $k (i32.const 0))
    (block $done5 (loop $target
      (br_if $done5 (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $end (i32.load offset=4 (i32.add (local.get $pstart) (i32.shl (local.get $i) (i32.const 2)))))
      (block $done6 (loop $source
        (br_if $done6 (i32.ge_u (local.get $k) (local.get $end)))
        (local.set $p (i32.add (local.get $fill)
          (i32.shl (i32.load (i32.add (local.get $ppos) (i32.shl (local.get $k) (i32.const 2)))) (i32.const 2))))
        (local.set $e (i32.load (local.get $p)))
        (i32.store (local.get $p) (i32.add (local.get $e) (i32.const 1)))
        (i32.store (i32.add (local.get $sadj) (i32.shl (local.get $e) (i32.const 2))) (local.get $i))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $source)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $target))))

  ;; Phase 1, positions from the top down: counts[i] for tasks whose list of reachable open
  ;; positions stays within $limit entries (and the arena within $budget), else -1. The
  ;; caller fills counts and stamp with -1. A list is built in place at the arena's end.
  (func (export "sparse")
    (param $n i32) (param $sstart i32) (param $sadj i32) (param $open i32) (param $counts i32)
    (param $first i32) (param $stamp i32) (param $arena i32) (param $limit i32) (param $budget i32)
    (local $i i32) (local $k i32) (local $end i32) (local $j i32) (local $x i32)
    (local $used i32) (local $w i32) (local $cap i32) (local $p i32) (local $pEnd i32)
    (local.set $i (local.get $n))
    (local.set $used (local.get $arena))
    (local.set $budget (i32.add (local.get $arena) (i32.shl (local.get $budget) (i32.const 2))))
    (local.set $limit (i32.shl (local.get $limit) (i32.const 2)))
    (block $all (loop $task
      (br_if $all (i32.eqz (local.get $i)))
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (local.set $k (i32.add (local.get $sadj)
        (i32.shl (i32.load (i32.add (local.get $sstart) (i32.shl (local.get $i) (i32.const 2)))) (i32.const 2))))
      (local.set $end (i32.add (local.get $sadj)
        (i32.shl (i32.load offset=4 (i32.add (local.get $sstart) (i32.shl (local.get $i) (i32.const 2)))) (i32.const 2))))
      (block $dense
        ;; A dense successor makes i dense: check them all before merging any list.
        (local.set $p (local.get $k))
        (block $checked (loop $check
          (br_if $checked (i32.ge_u (local.get $p) (local.get $end)))
          (br_if $dense (i32.lt_s (i32.load (i32.add (local.get $counts)
            (i32.shl (i32.load (local.get $p)) (i32.const 2)))) (i32.const 0)))
          (local.set $p (i32.add (local.get $p) (i32.const 4)))
          (br $check)))
        (local.set $cap (select (i32.add (local.get $used) (local.get $limit)) (local.get $budget)
          (i32.lt_u (i32.add (local.get $used) (local.get $limit)) (local.get $budget))))
        (local.set $w (local.get $used))
        (block $merged (loop $succ
          (br_if $merged (i32.ge_u (local.get $k) (local.get $end)))
          (local.set $j (i32.load (local.get $k)))
          (local.set $k (i32.add (local.get $k) (i32.const 4)))
          (block $listed
            (if (i32.load8_u (i32.add (local.get $open) (local.get $j)))
              (then
                ;; reached through an earlier successor: so is all it reaches
                (br_if $listed (i32.eq (i32.load (i32.add (local.get $stamp) (i32.shl (local.get $j) (i32.const 2))))
                  (local.get $i)))
                (br_if $dense (i32.ge_u (local.get $w) (local.get $cap)))
                (i32.store (i32.add (local.get $stamp) (i32.shl (local.get $j) (i32.const 2))) (local.get $i))
                (i32.store (local.get $w) (local.get $j))
                (local.set $w (i32.add (local.get $w) (i32.const 4)))))
            (local.set $p (i32.load (i32.add (local.get $first) (i32.shl (local.get $j) (i32.const 2)))))
            (local.set $pEnd (i32.add (local.get $p)
              (i32.shl (i32.load (i32.add (local.get $counts) (i32.shl (local.get $j) (i32.const 2)))) (i32.const 2))))
            (block $copied (loop $entry
              (br_if $copied (i32.ge_u (local.get $p) (local.get $pEnd)))
              (local.set $x (i32.shl (i32.load (local.get $p)) (i32.const 2)))
              (local.set $p (i32.add (local.get $p) (i32.const 4)))
              (br_if $entry (i32.eq (i32.load (i32.add (local.get $stamp) (local.get $x))) (local.get $i)))
              (br_if $dense (i32.ge_u (local.get $w) (local.get $cap)))
              (i32.store (i32.add (local.get $stamp) (local.get $x)) (local.get $i))
              (i32.store (local.get $w) (i32.shr_u (local.get $x) (i32.const 2)))
              (local.set $w (i32.add (local.get $w) (i32.const 4)))
              (br $entry))))
          (br $succ)))
        (i32.store (i32.add (local.get $first) (i32.shl (local.get $i) (i32.const 2))) (local.get $used))
        (i32.store (i32.add (local.get $counts) (i32.shl (local.get $i) (i32.const 2)))
          (i32.shr_u (i32.sub (local.get $w) (local.get $used)) (i32.const 2)))
        (local.set $used (local.get $w)))
      (br $task))))

  ;; Writes the positions whose count is -1 to $dense, then returns how many.
  (func (export "denseTasks") (param $n i32) (param $counts i32) (param $dense i32) (result i32)
    (local $i i32) (local $d i32)
    (local.set $d (local.get $dense))
    (block $all (loop $each
      (br_if $all (i32.ge_u (local.get $i) (local.get $n)))
      (if (i32.lt_s (i32.load (i32.add (local.get $counts) (i32.shl (local.get $i) (i32.const 2)))) (i32.const 0))
        (then
          (i32.store (local.get $d) (local.get $i))
          (local.set $d (i32.add (local.get $d) (i32.const 4)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $each)))
    (i32.shr_u (i32.sub (local.get $d) (local.get $dense)) (i32.const 2)))

  ;; Writes the open positions to $opens, then 7 times n; returns the address of the first n.
  (func (export "openTasks") (param $n i32) (param $open i32) (param $opens i32) (result i32)
    (local $i i32)
    (block $all (loop $each
      (br_if $all (i32.ge_u (local.get $i) (local.get $n)))
      (i32.store (local.get $opens) (local.get $i))
      (local.set $opens (i32.add (local.get $opens)
        (i32.shl (i32.load8_u (i32.add (local.get $open) (local.get $i))) (i32.const 2))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $each)))
    (local.set $i (i32.const 0))
    (block $padded (loop $pad
      (br_if $padded (i32.ge_u (local.get $i) (i32.const 28)))
      (i32.store (i32.add (local.get $opens) (local.get $i)) (local.get $n))
      (local.set $i (i32.add (local.get $i) (i32.const 4)))
      (br $pad)))
    (local.get $opens))

  ;; planes from $p upward += $x: add $x to one plane and carry the overflow up.
  (func $add (param $p i32) (param $x v128)
    (local $c v128)
    (loop $carry
      (local.set $c (v128.load (local.get $p)))
      (v128.store (local.get $p) (v128.xor (local.get $c) (local.get $x)))
      (local.set $x (v128.and (local.get $c) (local.get $x)))
      (local.set $p (i32.add (local.get $p) (i32.const 16)))
      (br_if $carry (v128.any_true (local.get $x)))))

  ;; Phase 2, one pass for up to 512 sources, one bit (lane) each, so a task's lanes fill
  ;; one 64-byte cache line, read with four v128 loads per predecessor. Walking positions
  ;; upward from the first source, every task gathers from its predecessors the lanes of
  ;; the sources that reach it (plus its own lane if it is a source). Every 240 tasks, the
  ;; open ones just gathered are counted, eight at a time through a carry-save adder tree
  ;; (Harley-Seal), a quarter of the lanes at a time, into the planes. An open source
  ;; counts its own lane too: settle takes it off. Positions below the first source must
  ;; hold zero in out. $openEnd: the address of the first padding entry of opens.
  (func (export "pass")
    (param $n i32) (param $pstart i32) (param $ppos i32) (param $out i32) (param $sources i32)
    (param $lanes i32) (param $planes i32) (param $opens i32) (param $openEnd i32)
    (local $v i32) (local $o i32) (local $k i32) (local $end i32) (local $next i32) (local $stop i32)
    (local $a i32) (local $q i32) (local $i i32) (local $e i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $x0 v128) (local $x1 v128) (local $u v128) (local $t v128)
    (local $ta v128) (local $tb v128) (local $fa v128) (local $fb v128)
    ;; counts of weight 1, 2, 4, then 8 c3 + 16 c4 + ... + 128 c7: 255 at most
    (local $ones v128) (local $twos v128) (local $fours v128)
    (local $c3 v128) (local $c4 v128) (local $c5 v128) (local $c6 v128) (local $c7 v128)
    (local.set $v (i32.load (local.get $sources)))
    (local.set $next (local.get $v))
    ;; $o: the first entry of opens at or after $v (binary search).
    (local.set $o (local.get $opens))
    (local.set $e (local.get $openEnd))
    (block $found (loop $search
      (br_if $found (i32.ge_u (local.get $o) (local.get $e)))
      (local.set $a (i32.add (local.get $o)
        (i32.shl (i32.shr_u (i32.sub (local.get $e) (local.get $o)) (i32.const 3)) (i32.const 2))))
      (if (i32.lt_u (i32.load (local.get $a)) (local.get $v))
        (then (local.set $o (i32.add (local.get $a) (i32.const 4))))
        (else (local.set $e (local.get $a))))
      (br $search)))
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
        (local.set $a (i32.add (local.get $pstart) (i32.shl (local.get $v) (i32.const 2))))
        (local.set $k (i32.add (local.get $ppos) (i32.shl (i32.load (local.get $a)) (i32.const 2))))
        (local.set $end (i32.add (local.get $ppos) (i32.shl (i32.load offset=4 (local.get $a)) (i32.const 2))))
        (block $gathered
          (loop $pred
            (br_if $gathered (i32.ge_u (local.get $k) (local.get $end)))
            (local.set $a (i32.add (local.get $out) (i32.shl (i32.load (local.get $k)) (i32.const 6))))
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
        ;; Add the register counts to quarter q's planes (plane b of weight 2^b): a
        ;; ripple-carry adder over the low 8 planes, then the carry ($t) up the rest.
        (local.set $a (i32.add (local.get $planes) (i32.shl (local.get $q) (i32.const 5))))
        (local.set $t (v128.const i64x2 0 0))
        (local.set $u (v128.load offset=0 (local.get $a)))
        (local.set $x0 (v128.xor (local.get $u) (local.get $ones)))
        (v128.store offset=0 (local.get $a) (v128.xor (local.get $x0) (local.get $t)))
        (local.set $t (v128.or (v128.and (local.get $u) (local.get $ones)) (v128.and (local.get $x0) (local.get $t))))
        (local.set $u (v128.load offset=16 (local.get $a)))
        (local.set $x0 (v128.xor (local.get $u) (local.get $twos)))
        (v128.store offset=16 (local.get $a) (v128.xor (local.get $x0) (local.get $t)))
        (local.set $t (v128.or (v128.and (local.get $u) (local.get $twos)) (v128.and (local.get $x0) (local.get $t))))
        (local.set $u (v128.load offset=32 (local.get $a)))
        (local.set $x0 (v128.xor (local.get $u) (local.get $fours)))
        (v128.store offset=32 (local.get $a) (v128.xor (local.get $x0) (local.get $t)))
        (local.set $t (v128.or (v128.and (local.get $u) (local.get $fours)) (v128.and (local.get $x0) (local.get $t))))
        (local.set $u (v128.load offset=48 (local.get $a)))
        (local.set $x0 (v128.xor (local.get $u) (local.get $c3)))
        (v128.store offset=48 (local.get $a) (v128.xor (local.get $x0) (local.get $t)))
        (local.set $t (v128.or (v128.and (local.get $u) (local.get $c3)) (v128.and (local.get $x0) (local.get $t))))
        (local.set $u (v128.load offset=64 (local.get $a)))
        (local.set $x0 (v128.xor (local.get $u) (local.get $c4)))
        (v128.store offset=64 (local.get $a) (v128.xor (local.get $x0) (local.get $t)))
        (local.set $t (v128.or (v128.and (local.get $u) (local.get $c4)) (v128.and (local.get $x0) (local.get $t))))
        (local.set $u (v128.load offset=80 (local.get $a)))
        (local.set $x0 (v128.xor (local.get $u) (local.get $c5)))
        (v128.store offset=80 (local.get $a) (v128.xor (local.get $x0) (local.get $t)))
        (local.set $t (v128.or (v128.and (local.get $u) (local.get $c5)) (v128.and (local.get $x0) (local.get $t))))
        (local.set $u (v128.load offset=96 (local.get $a)))
        (local.set $x0 (v128.xor (local.get $u) (local.get $c6)))
        (v128.store offset=96 (local.get $a) (v128.xor (local.get $x0) (local.get $t)))
        (local.set $t (v128.or (v128.and (local.get $u) (local.get $c6)) (v128.and (local.get $x0) (local.get $t))))
        (local.set $u (v128.load offset=112 (local.get $a)))
        (local.set $x0 (v128.xor (local.get $u) (local.get $c7)))
        (v128.store offset=112 (local.get $a) (v128.xor (local.get $x0) (local.get $t)))
        (local.set $t (v128.or (v128.and (local.get $u) (local.get $c7)) (v128.and (local.get $x0) (local.get $t))))
        (call $add (i32.add (local.get $a) (i32.const 128)) (local.get $t))
        (local.set $q (i32.add (local.get $q) (i32.const 16)))
        (br_if $quarter (i32.lt_u (local.get $q) (i32.const 64))))
      (local.set $o (local.get $e))
      (br_if $chunk (i32.lt_u (local.get $v) (local.get $n)))))

  ;; After a pass: counts[source of lane l] = lane l's count from the planes ($bits of
  ;; them), less one for an open source (it reached itself), for the $group lanes.
  (func (export "settle")
    (param $group i32) (param $bits i32) (param $planes i32) (param $sources i32)
    (param $open i32) (param $counts i32)
    (local $l i32) (local $b i32) (local $c i32) (local $at i32) (local $s i32)
    (block $all (loop $lane
      (br_if $all (i32.ge_u (local.get $l) (local.get $group)))
      ;; lane l: bit l % 32 of word (l % 128) / 32 of quarter l / 128's planes
      (local.set $at (i32.add (local.get $planes)
        (i32.add (i32.shl (i32.shr_u (local.get $l) (i32.const 7)) (i32.const 9))
          (i32.shl (i32.shr_u (i32.and (local.get $l) (i32.const 127)) (i32.const 5)) (i32.const 2)))))
      (local.set $c (i32.const 0))
      (local.set $b (i32.const 0))
      (block $read (loop $plane
        (br_if $read (i32.ge_u (local.get $b) (local.get $bits)))
        (local.set $c (i32.or (local.get $c)
          (i32.shl (i32.and (i32.shr_u (i32.load (local.get $at)) (local.get $l)) (i32.const 1))
            (local.get $b))))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (br $plane)))
      (local.set $s (i32.load (i32.add (local.get $sources) (i32.shl (local.get $l) (i32.const 2)))))
      (i32.store (i32.add (local.get $counts) (i32.shl (local.get $s) (i32.const 2)))
        (i32.sub (local.get $c) (i32.load8_u (i32.add (local.get $open) (local.get $s)))))
      (local.set $l (i32.add (local.get $l) (i32.const 1)))
      (br $lane))))

  ;; result[order[i]] = counts[i]: back from positions to nodes.
  (func (export "byNode") (param $n i32) (param $order i32) (param $counts i32) (param $result i32)
    (local $i i32)
    (block $all (loop $each
      (br_if $all (i32.ge_u (local.get $i) (local.get $n)))
      (i32.store
        (i32.add (local.get $result)
          (i32.shl (i32.load (i32.add (local.get $order) (i32.shl (local.get $i) (i32.const 2)))) (i32.const 2)))
        (i32.load (i32.add (local.get $counts) (i32.shl (local.get $i) (i32.const 2)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $each))))
)
