//! The etcd store's unit tests, by topic; the behaviour it shares with
//! SQLite is tested once for both in `tests/store/conformance/`.

mod golden;
