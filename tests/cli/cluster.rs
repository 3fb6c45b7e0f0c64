//! `ringd cluster`: the decision-maker and the instances, as a table and
//! as JSON, compared with the golden files (timestamps aside).

use crate::support::cli::check;
use crate::support::ringd::Ringd;

#[test]
fn the_cluster_of_one_embedded_instance() {
    let s = Ringd::sqlite()
        .args(&[
            "--instance-id",
            "solo",
            "--advertise-url",
            "http://ringd-solo.test:7420",
        ])
        .start();
    let table = check(&s.url, "cluster.txt", &["cluster"]);
    assert!(
        table.starts_with("store sqlite, decision-maker solo (term 1, since "),
        "{table}"
    );
    check(&s.url, "cluster.json", &["-o", "json", "cluster"]);
}
