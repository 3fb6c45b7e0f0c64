//! twemproxy's key hashes against the shared file
//! `tests/placement/vectors/hashes/twemproxy.json`, which the Python client
//! reads too. The keys cover every tail length of the block-wise hashes
//! (0 to 26 bytes), bytes above 0x7F in every position (several hashes
//! sign-extend them) and memcached's longest key (250 bytes).
//!
//! Regenerate with `RINGD_BLESS=1 cargo test --release --test placement
//! twemproxy_hashes::` after an intended change, and say why in the commit.

use ringd::placement::twemproxy::hashes::hash32;
use ringd::placement::HashFunction;
use serde_json::{json, Value};

fn keys() -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = Vec::new();
    for len in 0..=26u32 {
        // ASCII letters, then bytes from 0x80 up.
        keys.push((0..len).map(|i| b'a' + (i % 26) as u8).collect());
        keys.push(
            (0..len)
                .map(|i| 0x80 + ((i * 37 + 11) % 128) as u8)
                .collect(),
        );
    }
    for text in ["apple", "123456789", "user:{42}:cart", "é", "ключ"] {
        keys.push(text.as_bytes().to_vec());
    }
    // One high byte at each offset of an 8-byte ASCII key.
    for at in 0..8 {
        let mut k = b"abcdefgh".to_vec();
        k[at] = 0xff;
        keys.push(k);
    }
    keys.push((0..250u32).map(|i| 0x21 + (i * 7 % 0xde) as u8).collect());
    keys
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn computed() -> Value {
    let keys = keys();
    let mut hashes = serde_json::Map::new();
    for f in HashFunction::TWEMPROXY {
        let values: Vec<u32> = keys
            .iter()
            .map(|k| hash32(f, k).expect("a twemproxy hash"))
            .collect();
        hashes.insert(f.name().to_string(), json!(values));
    }
    json!({
        "description": "twemproxy's key hashes (spec 3.7): hashes[name][i] is the 32-bit hash of the bytes keys_hex[i]",
        "keys_hex": keys.iter().map(|k| hex(k)).collect::<Vec<_>>(),
        "hashes": hashes,
    })
}

#[test]
fn twemproxy_hashes_match_the_shared_file() {
    let path = format!(
        "{}/tests/placement/vectors/hashes/twemproxy.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let computed = computed();
    if std::env::var_os("RINGD_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(std::path::Path::new(&path).parent().unwrap()).unwrap();
        let text = serde_json::to_string_pretty(&computed).unwrap();
        std::fs::write(&path, text + "\n").unwrap();
    }
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(
        stored == computed,
        "{path} differs from the hashes: regenerate with RINGD_BLESS=1 if intended"
    );
}

#[test]
fn the_file_shows_the_sign_extension() {
    // 0xFF enters fnv1a_64 as 0xFFFFFFFF: the keys "abcdefgh" with 0xFF at
    // offset 0 and "\xff" alone hash as with that word, not as with 0xFF.
    let fnv = |k: &[u8]| hash32(HashFunction::Fnv1a64, k).unwrap();
    let basis = 0x8422_2325u32;
    assert_eq!(fnv(&[0xff]), (basis ^ 0xffff_ffff).wrapping_mul(0x1b3));
}
