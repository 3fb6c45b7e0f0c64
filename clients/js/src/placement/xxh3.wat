;; XXH3-64 with seed 0 and the default secret, for inputs up to 240 bytes:
;; the key hash of every 64-bit algorithm. Why WebAssembly of our own
;; (docs/benchmarks.md, "JavaScript client against npm hashing packages"):
;; hash-wasm's streaming hasher costs 650-750 ns per key in calls and
;; typed-array views, and the same arithmetic in JavaScript, on u32 halves,
;; 60-120 ns for the benchmark's 14-29-byte keys; here i64.mul does it in
;; one call. xxh3-wasm.js holds this module assembled (npm run assemble);
;; test/xxh3.test.js checks that it is this text, and every length from 0
;; to 240 against hash-wasm.
;;
;; Memory: the input at 0 (up to 240 bytes), the result at 256 (u64,
;; little-endian), the secret's first 136 bytes at 512 (all that inputs up
;; to 240 bytes read).
(module
  (memory (export "memory") 1 1)
  (data (i32.const 512)
    "\b8\fe\6c\39\23\a4\4b\be\7c\01\81\2c\f7\21\ad\1c"
    "\de\d4\6d\e9\83\90\97\db\72\40\a4\a4\b7\b3\67\1f"
    "\cb\79\e6\4e\cc\c0\e5\78\82\5a\d0\7d\cc\ff\72\21"
    "\b8\08\46\74\f7\43\24\8e\e0\35\90\e6\81\3a\26\4c"
    "\3c\28\52\bb\91\c3\00\cb\88\d0\65\8b\1b\53\2e\a3"
    "\71\64\48\97\a2\0d\f9\4e\38\19\ef\46\a9\de\ac\d8"
    "\a8\fa\76\3f\e3\9c\34\3f\f9\dc\bb\c7\c7\0b\4f\1d"
    "\8a\51\e0\4b\cd\b4\59\31\c8\9f\7e\c9\d9\78\73\64"
    "\ea\c5\ac\83\34\d3\eb\c3")

  ;; XXH3_mul128_fold64: the 128-bit product's halves xored.
  (func $fold (param $a i64) (param $b i64) (result i64)
    (local $ll i64) (local $hl i64) (local $lh i64) (local $hh i64) (local $cross i64)
    (local.set $ll (i64.mul (i64.and (local.get $a) (i64.const 0xffffffff))
                            (i64.and (local.get $b) (i64.const 0xffffffff))))
    (local.set $hl (i64.mul (i64.shr_u (local.get $a) (i64.const 32))
                            (i64.and (local.get $b) (i64.const 0xffffffff))))
    (local.set $lh (i64.mul (i64.and (local.get $a) (i64.const 0xffffffff))
                            (i64.shr_u (local.get $b) (i64.const 32))))
    (local.set $hh (i64.mul (i64.shr_u (local.get $a) (i64.const 32))
                            (i64.shr_u (local.get $b) (i64.const 32))))
    (local.set $cross (i64.add (i64.add (i64.shr_u (local.get $ll) (i64.const 32))
                                        (i64.and (local.get $hl) (i64.const 0xffffffff)))
                               (local.get $lh)))
    (i64.xor
      ;; low half
      (i64.or (i64.shl (local.get $cross) (i64.const 32))
              (i64.and (local.get $ll) (i64.const 0xffffffff)))
      ;; high half
      (i64.add (i64.add (i64.shr_u (local.get $hl) (i64.const 32))
                        (i64.shr_u (local.get $cross) (i64.const 32)))
               (local.get $hh))))

  ;; XXH3_mix16B with seed 0: input at $in, secret at $s.
  (func $mix16 (param $in i32) (param $s i32) (result i64)
    (call $fold
      (i64.xor (i64.load (local.get $in)) (i64.load (local.get $s)))
      (i64.xor (i64.load offset=8 (local.get $in)) (i64.load offset=8 (local.get $s)))))

  ;; XXH3_avalanche
  (func $avalanche (param $h i64) (result i64)
    (local.set $h (i64.mul (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 37)))
                           (i64.const 0x165667919e3779f9)))
    (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 32))))

  ;; XXH64_avalanche
  (func $avalanche64 (param $h i64) (result i64)
    (local.set $h (i64.mul (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 33)))
                           (i64.const 0xc2b2ae3d27d4eb4f)))
    (local.set $h (i64.mul (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 29)))
                           (i64.const 0x165667b19e3779f9)))
    (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 32))))

  ;; XXH3_rrmxmx
  (func $rrmxmx (param $h i64) (param $len i64) (result i64)
    (local.set $h (i64.xor (local.get $h)
                           (i64.xor (i64.rotl (local.get $h) (i64.const 49))
                                    (i64.rotl (local.get $h) (i64.const 24)))))
    (local.set $h (i64.mul (local.get $h) (i64.const 0x9fb21c651e98df25)))
    (local.set $h (i64.xor (local.get $h)
                           (i64.add (i64.shr_u (local.get $h) (i64.const 35)) (local.get $len))))
    (local.set $h (i64.mul (local.get $h) (i64.const 0x9fb21c651e98df25)))
    (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 28))))

  ;; The bytes of $x reversed (XXH_swap64).
  (func $bswap64 (param $x i64) (result i64)
    (local.set $x (i64.or (i64.shl (i64.and (local.get $x) (i64.const 0x00ff00ff00ff00ff)) (i64.const 8))
                          (i64.and (i64.shr_u (local.get $x) (i64.const 8)) (i64.const 0x00ff00ff00ff00ff))))
    (local.set $x (i64.or (i64.shl (i64.and (local.get $x) (i64.const 0x0000ffff0000ffff)) (i64.const 16))
                          (i64.and (i64.shr_u (local.get $x) (i64.const 16)) (i64.const 0x0000ffff0000ffff))))
    (i64.rotl (local.get $x) (i64.const 32)))

  ;; Inputs of 0 to 16 bytes.
  (func $upTo16 (param $len i32) (result i64)
    (local $lo i64) (local $hi i64)
    (if (i32.gt_u (local.get $len) (i32.const 8))
      (then
        (local.set $lo (i64.xor (i64.load (i32.const 0))
                                (i64.xor (i64.load (i32.const 536)) (i64.load (i32.const 544)))))
        (local.set $hi (i64.xor (i64.load (i32.sub (local.get $len) (i32.const 8)))
                                (i64.xor (i64.load (i32.const 552)) (i64.load (i32.const 560)))))
        (return (call $avalanche
          (i64.add (i64.add (i64.extend_i32_u (local.get $len)) (call $bswap64 (local.get $lo)))
                   (i64.add (local.get $hi) (call $fold (local.get $lo) (local.get $hi))))))))
    (if (i32.ge_u (local.get $len) (i32.const 4))
      (then
        (return (call $rrmxmx
          (i64.xor
            (i64.or (i64.shl (i64.load32_u (i32.const 0)) (i64.const 32))
                    (i64.load32_u (i32.sub (local.get $len) (i32.const 4))))
            (i64.xor (i64.load (i32.const 520)) (i64.load (i32.const 528))))
          (i64.extend_i32_u (local.get $len))))))
    (if (i32.gt_u (local.get $len) (i32.const 0))
      (then
        (return (call $avalanche64
          (i64.extend_i32_u
            (i32.xor
              (i32.or (i32.or (i32.shl (i32.load8_u (i32.const 0)) (i32.const 16))
                              (i32.shl (i32.load8_u (i32.shr_u (local.get $len) (i32.const 1))) (i32.const 24)))
                      (i32.or (i32.load8_u (i32.sub (local.get $len) (i32.const 1)))
                              (i32.shl (local.get $len) (i32.const 8))))
              (i32.xor (i32.load (i32.const 512)) (i32.load (i32.const 516)))))))))
    (call $avalanche64 (i64.xor (i64.load (i32.const 568)) (i64.load (i32.const 576)))))

  ;; Inputs of 17 to 128 bytes.
  (func $upTo128 (param $len i32) (result i64)
    (local $acc i64)
    (local.set $acc (i64.mul (i64.extend_i32_u (local.get $len)) (i64.const 0x9e3779b185ebca87)))
    (if (i32.gt_u (local.get $len) (i32.const 32))
      (then
        (if (i32.gt_u (local.get $len) (i32.const 64))
          (then
            (if (i32.gt_u (local.get $len) (i32.const 96))
              (then
                (local.set $acc (i64.add (local.get $acc) (call $mix16 (i32.const 48) (i32.const 608))))
                (local.set $acc (i64.add (local.get $acc)
                  (call $mix16 (i32.sub (local.get $len) (i32.const 64)) (i32.const 624))))))
            (local.set $acc (i64.add (local.get $acc) (call $mix16 (i32.const 32) (i32.const 576))))
            (local.set $acc (i64.add (local.get $acc)
              (call $mix16 (i32.sub (local.get $len) (i32.const 48)) (i32.const 592))))))
        (local.set $acc (i64.add (local.get $acc) (call $mix16 (i32.const 16) (i32.const 544))))
        (local.set $acc (i64.add (local.get $acc)
          (call $mix16 (i32.sub (local.get $len) (i32.const 32)) (i32.const 560))))))
    (local.set $acc (i64.add (local.get $acc) (call $mix16 (i32.const 0) (i32.const 512))))
    (local.set $acc (i64.add (local.get $acc)
      (call $mix16 (i32.sub (local.get $len) (i32.const 16)) (i32.const 528))))
    (call $avalanche (local.get $acc)))

  ;; Inputs of 129 to 240 bytes.
  (func $upTo240 (param $len i32) (result i64)
    (local $acc i64) (local $i i32) (local $rounds i32)
    (local.set $acc (i64.mul (i64.extend_i32_u (local.get $len)) (i64.const 0x9e3779b185ebca87)))
    (loop $first
      (local.set $acc (i64.add (local.get $acc)
        (call $mix16 (i32.mul (local.get $i) (i32.const 16))
                     (i32.add (i32.const 512) (i32.mul (local.get $i) (i32.const 16))))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $first (i32.lt_u (local.get $i) (i32.const 8))))
    (local.set $acc (call $avalanche (local.get $acc)))
    (local.set $rounds (i32.shr_u (local.get $len) (i32.const 4)))
    ;; MIDSIZE_STARTOFFSET 3
    (block $done
      (loop $more
        (br_if $done (i32.ge_u (local.get $i) (local.get $rounds)))
        (local.set $acc (i64.add (local.get $acc)
          (call $mix16 (i32.mul (local.get $i) (i32.const 16))
                       (i32.add (i32.const 515) (i32.mul (i32.sub (local.get $i) (i32.const 8)) (i32.const 16))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $more)))
    ;; SECRET_SIZE_MIN 136 - MIDSIZE_LASTOFFSET 17 = 119
    (local.set $acc (i64.add (local.get $acc)
      (call $mix16 (i32.sub (local.get $len) (i32.const 16)) (i32.const 631))))
    (call $avalanche (local.get $acc)))

  ;; XXH3-64 of the $len bytes at 0 ($len at most 240), stored at 256.
  (func (export "xxh3") (param $len i32)
    (i64.store (i32.const 256)
      (if (result i64) (i32.le_u (local.get $len) (i32.const 16))
        (then (call $upTo16 (local.get $len)))
        (else
          (if (result i64) (i32.le_u (local.get $len) (i32.const 128))
            (then (call $upTo128 (local.get $len)))
            (else (call $upTo240 (local.get $len))))))))
)
