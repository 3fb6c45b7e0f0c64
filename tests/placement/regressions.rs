//! Saved proptest seeds are replayed only from where proptest reads them:
//! with its default persistence (`SourceParallel`), a test file
//! `tests/<suite>/x.rs` of a suite rooted at `tests/<suite>/main.rs` reads
//! `tests/proptest-regressions/x.txt`. A seed file anywhere else is kept in
//! the repository and never run, as `jump_runs.proptest-regressions` was.

use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn every_saved_seed_file_is_where_proptest_reads_it() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let seeds = tests.join("proptest-regressions");
    let mut all = Vec::new();
    files_under(&tests, &mut all);
    let stray: Vec<_> = all
        .iter()
        .filter(|p| !p.starts_with(&seeds))
        .filter(|p| p.to_string_lossy().contains("proptest-regressions"))
        .collect();
    assert!(
        stray.is_empty(),
        "seed files proptest never reads: {stray:?}"
    );

    let suites: Vec<PathBuf> = std::fs::read_dir(&tests)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("main.rs").is_file())
        .collect();
    for seed in std::fs::read_dir(&seeds).unwrap() {
        let seed = seed.unwrap().path();
        let stem = seed.file_stem().unwrap().to_string_lossy().into_owned();
        assert_eq!(seed.extension().unwrap(), "txt", "{seed:?}");
        // The test file it belongs to, in some suite, with proptests.
        let source = suites
            .iter()
            .map(|s| s.join(format!("{stem}.rs")))
            .find(|f| f.is_file())
            .unwrap_or_else(|| panic!("{seed:?} belongs to no test file"));
        let text = std::fs::read_to_string(&source).unwrap();
        assert!(text.contains("proptest!"), "{source:?} has no proptests");
    }
    assert!(seeds.join("jump_runs.txt").is_file());
}
