//! `ringd cluster`: the instances sharing the store and which of them is
//! the decision-maker of automatic membership changes.

use clap::Args;

use super::context::decode;
use super::output::{emit, emit_json, escape, time, yes_no, Align, Table};
use super::{CliError, Context};
use crate::wire::ClusterView;

/// `ringd cluster`.
#[derive(Debug, Args)]
pub struct ClusterArgs {}

/// Prints the decision-maker and the instances.
pub async fn run(ctx: &Context, _: ClusterArgs) -> Result<(), CliError> {
    let body = ctx.get("/v1/cluster").await?;
    if ctx.json() {
        return emit_json(&body);
    }
    let cluster: ClusterView = decode("cluster", &body)?;
    emit(&render(&cluster))
}

/// The table: one line on the store and the decision-maker, then one row
/// per instance.
fn render(c: &ClusterView) -> String {
    let leader = match &c.leader {
        None => "no decision-maker (an election is under way)".to_owned(),
        Some(l) => format!(
            "decision-maker {} (term {}, since {})",
            escape(&l.instance),
            l.term,
            l.since.map_or_else(|| "now".to_owned(), time)
        ),
    };
    let mut t = Table::new(&[
        ("INSTANCE", Align::Left),
        ("URL", Align::Left),
        ("VERSION", Align::Left),
        ("STARTED", Align::Left),
        ("LEADER", Align::Left),
    ]);
    for i in &c.instances {
        t.row(vec![
            i.id.clone(),
            i.url.clone(),
            i.version.clone(),
            time(i.started_at),
            yes_no(i.leader),
        ]);
    }
    let count = match c.instances.len() {
        1 => "1 instance".to_owned(),
        n => format!("{n} instances"),
    };
    format!(
        "store {}, {leader}\n\n{}\n{count}\n",
        c.store.as_str(),
        t.render()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{ClusterLeaderView, InstanceView, StoreKindName};

    #[test]
    fn the_table_names_the_decision_maker_and_every_instance() {
        let at = time::OffsetDateTime::from_unix_timestamp(1_750_000_000).unwrap();
        let instance = |id: &str, leader| InstanceView {
            id: id.into(),
            url: format!("http://{id}:7420"),
            version: "0.1.0".into(),
            started_at: at,
            leader,
        };
        let c = ClusterView {
            store: StoreKindName::Etcd,
            leader: Some(ClusterLeaderView {
                instance: "a".into(),
                url: "http://a:7420".into(),
                term: 17,
                since: Some(at),
            }),
            instances: vec![instance("a", true), instance("b", false)],
        };
        let text = render(&c);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            format!("store etcd, decision-maker a (term 17, since {})", time(at))
        );
        assert!(lines[2].starts_with("INSTANCE"), "{text}");
        assert!(
            lines[3].starts_with("a ") && lines[3].ends_with("yes"),
            "{text}"
        );
        assert!(
            lines[4].starts_with("b ") && lines[4].ends_with("no"),
            "{text}"
        );
        assert_eq!(lines.last(), Some(&"2 instances"));
        let none = render(&ClusterView { leader: None, ..c });
        assert!(none.starts_with("store etcd, no decision-maker (an election is under way)\n"));
    }
}
