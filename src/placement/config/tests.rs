use super::*;

fn written(c: &RingConfig) -> serde_json::Value {
    serde_json::to_value(c).unwrap()
}

#[test]
fn table_size_is_written_for_maglev_or_when_not_the_default() {
    let ring = RingConfig::new(Algorithm::Ring);
    assert!(written(&ring).get("table_size").is_none());
    let maglev = RingConfig::new(Algorithm::Maglev);
    assert_eq!(written(&maglev)["table_size"], DEFAULT_TABLE_SIZE);
    let set = RingConfig {
        table_size: 251,
        ..ring
    };
    assert_eq!(written(&set)["table_size"], 251);
    // Each reads back as it was.
    for c in [RingConfig::new(Algorithm::Ring), maglev, set] {
        assert_eq!(
            serde_json::from_value::<RingConfig>(written(&c)).unwrap(),
            c
        );
    }
}
