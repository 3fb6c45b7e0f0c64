//! What the benchmarks and load tools share: the keys they look up, so
//! every figure in docs/benchmarks.md is measured on the same inputs.
//! (A folder, so cargo does not take it for a benchmark of its own.)

/// 1,024 keys of 16 to 40 bytes.
pub(crate) fn keys() -> Vec<Vec<u8>> {
    (0..1024)
        .map(|i| {
            let mut k = format!("user:{i:08}:").into_bytes();
            k.resize(16 + i % 25, b'x');
            k
        })
        .collect()
}
