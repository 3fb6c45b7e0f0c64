//! `ringd node join RING ID`: keeps a node in a ring for as long as the
//! command runs. It registers the node with a lease through
//! [`Member`], renews it in the foreground, prints one line per change of
//! state to stderr, and on SIGINT or SIGTERM releases the lease (the node
//! is `left` at once) and exits 0. Fit to be a systemd unit's `ExecStart`
//! or a container's entrypoint; see `docs/membership.md`.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use clap::Args;

use super::flags::parse_label;
use super::output::{escape, time};
use super::{CliError, Context};
use crate::client::{ClientError, Member, MemberState, MemberStatus};
use crate::placement::{HashKey, NodeId, Weight, Zone};
use crate::ring::durations::{format_duration, LEASE_TTL};
use crate::ring::{NodeRecord, NodeRecordSpec};

/// `ringd node join RING ID [flags]`.
#[derive(Debug, Args)]
pub struct JoinArgs {
    /// The ring.
    pub ring: String,
    /// The node's id.
    pub id: String,
    /// How long the lease lasts without a renewal (1s to 1h); it is
    /// renewed about every third of it.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_ttl)]
    pub ttl: Duration,
    /// Relative capacity, 1–1000000 [default: 1].
    #[arg(long, value_name = "W", value_parser = parse_weight)]
    pub weight: Option<Weight>,
    /// Failure domain.
    #[arg(long, value_name = "Z", value_parser = parse_zone)]
    pub zone: Option<Zone>,
    /// Where clients reach the node (not interpreted).
    #[arg(long, value_name = "A")]
    pub address: Option<String>,
    /// A label; repeat for several.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
    /// Hash this instead of the id, so a replacement takes over a node's
    /// positions.
    #[arg(long, value_name = "K", value_parser = parse_hash_key)]
    pub hash_key: Option<HashKey>,
}

fn parse_ttl(text: &str) -> Result<Duration, String> {
    LEASE_TTL.parse(text).map_err(|e| e.to_string())
}

fn parse_weight(text: &str) -> Result<Weight, String> {
    let n: u64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number"))?;
    Weight::new(n).map_err(|e| e.to_string())
}

fn parse_zone(text: &str) -> Result<Zone, String> {
    Zone::new(text).map_err(|e| e.to_string())
}

fn parse_hash_key(text: &str) -> Result<HashKey, String> {
    HashKey::new(text).map_err(|e| e.to_string())
}

impl JoinArgs {
    /// The node's record, checked by the rules ringd applies to a node an
    /// operator sends.
    fn record(&self) -> Result<NodeRecord, ClientError> {
        let id = NodeId::new(self.id.as_str())
            .map_err(|e| ClientError::InvalidSetting(e.to_string()))?;
        let spec = NodeRecordSpec {
            id: Some(id),
            address: self.address.clone(),
            weight: self.weight,
            zone: self.zone.clone(),
            // A label given twice keeps its last value, as on the command line.
            labels: self.labels.iter().cloned().collect::<BTreeMap<_, _>>(),
            state: None,
            hash_key: self.hash_key.clone(),
            ramp: None,
        };
        Ok(spec.into_new_record(None)?)
    }
}

/// Runs `ringd node join`.
pub async fn run(ctx: &Context, args: JoinArgs) -> Result<(), CliError> {
    let record = args.record().map_err(CliError::Usage)?;
    let member = Member::on_endpoints(ctx.endpoints.clone(), &args.ring, record)
        .ttl(args.ttl)
        .start()
        .map_err(CliError::Usage)?;
    say(&format!(
        "node {} joining ring {} with a {} lease via {}",
        member.node(),
        member.ring(),
        format_duration(args.ttl),
        ctx.endpoints.urls().join(",")
    ));
    let mut rx = member.subscribe();
    let mut shown = rx.borrow_and_update().clone();
    let stop = crate::server::shutdown_signal();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => break,
            changed = rx.changed() => {
                let now = rx.borrow_and_update().clone();
                if now.state == MemberState::Failed {
                    let err = now.last_error.as_deref().map_or(ClientError::Closed, owned);
                    return Err(CliError::Usage(err));
                }
                for line in lines(&shown, &now) {
                    say(&line);
                }
                shown = now;
                if changed.is_err() {
                    // The task ended without failing: nothing more to show.
                    break;
                }
            }
        }
    }
    let lease = member.status().lease_id;
    member.leave().await?;
    say(&match lease {
        Some(id) => format!("left: lease {id} released"),
        None => "left: no lease was held".to_owned(),
    });
    Ok(())
}

/// The lines to print when the status goes from `before` to `now`: one
/// per change of state, and one per new error while the state stays (a
/// retry), so a server that stays down is not announced again and again.
fn lines(before: &MemberStatus, now: &MemberStatus) -> Vec<String> {
    if now.losses > before.losses && now.state != MemberState::Lost {
        // The loss and the new registration came faster than this reader
        // looked: say both.
        let lost = MemberStatus {
            state: MemberState::Lost,
            lease_id: before.lease_id,
            ..now.clone()
        };
        let mut out = lines(before, &lost);
        out.extend(lines(&lost, now));
        return out;
    }
    let lease = now
        .lease_id
        .map_or_else(|| "-".to_owned(), |l| l.to_string());
    let deadline = now.deadline.map_or_else(|| "-".to_owned(), time);
    let error = now.last_error.as_ref().map(|e| e.to_string());
    if now.state != before.state {
        return vec![match now.state {
            MemberState::Registered => format!(
                "registered: lease {lease} until {deadline}, ring version {}",
                now.version
                    .map_or_else(|| "-".to_owned(), |v| v.to_string())
            ),
            MemberState::Renewing => format!("renewing: lease {lease} until {deadline}"),
            MemberState::Lost => format!(
                "lost: lease {lease}: {}; registering again",
                error.as_deref().unwrap_or("no reason given")
            ),
            other => other.as_str().to_owned(),
        }];
    }
    let before_error = before.last_error.as_ref().map(|e| e.to_string());
    match error {
        Some(e) if Some(&e) != before_error.as_ref() => vec![format!("retrying: {e}")],
        _ => Vec::new(),
    }
}

/// Prints one line to stderr, escaped: it carries what the server said.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}", escape(line));
}

/// An owned copy of the refusal that stopped a member (always a problem
/// document or a bare status: only those are fatal).
fn owned(e: &ClientError) -> ClientError {
    match e {
        ClientError::Problem(p) => ClientError::Problem(p.clone()),
        ClientError::Status { status, url } => ClientError::Status {
            status: *status,
            url: url.clone(),
        },
        other => ClientError::InvalidSetting(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::LeaseId;
    use std::sync::Arc;

    fn status(state: MemberState, error: Option<&str>) -> MemberStatus {
        MemberStatus {
            state,
            lease_id: Some(LeaseId::from_bits(0xab)),
            deadline: Some(
                ::time::OffsetDateTime::parse(
                    "2026-12-01T10:00:05.5Z",
                    &::time::format_description::well_known::Rfc3339,
                )
                .unwrap(),
            ),
            version: Some(3),
            server: Some("http://a:1".into()),
            heartbeats: 1,
            losses: 0,
            last_error: error.map(|e| Arc::new(ClientError::InvalidSetting(e.into()))),
        }
    }

    #[test]
    fn one_line_per_state_change_and_per_new_error() {
        let id = "000000000000000000000000000000ab";
        let joining = status(MemberState::Joining, None);
        let registered = status(MemberState::Registered, None);
        assert_eq!(
            lines(&joining, &registered),
            [format!(
                "registered: lease {id} until 2026-12-01T10:00:05Z, ring version 3"
            )]
        );
        let renewing = status(MemberState::Renewing, None);
        assert_eq!(
            lines(&registered, &renewing),
            [format!("renewing: lease {id} until 2026-12-01T10:00:05Z")]
        );
        // Another renewal: nothing to say.
        assert!(lines(&renewing, &renewing).is_empty());
        let down = status(MemberState::Renewing, Some("down"));
        assert_eq!(lines(&renewing, &down), ["retrying: down"]);
        assert!(lines(&down, &down).is_empty());
        let lost = MemberStatus {
            losses: 1,
            ..status(MemberState::Lost, Some("gone"))
        };
        assert_eq!(
            lines(&down, &lost),
            [format!("lost: lease {id}: gone; registering again")]
        );
    }

    #[test]
    fn a_loss_seen_only_through_its_count_is_still_told() {
        let old = "000000000000000000000000000000ab";
        let new = "000000000000000000000000000000cd";
        let renewing = status(MemberState::Renewing, None);
        let again = MemberStatus {
            lease_id: Some(LeaseId::from_bits(0xcd)),
            losses: 1,
            version: Some(5),
            ..status(MemberState::Registered, None)
        };
        assert_eq!(
            lines(&renewing, &again),
            [
                format!("lost: lease {old}: no reason given; registering again"),
                format!("registered: lease {new} until 2026-12-01T10:00:05Z, ring version 5"),
            ]
        );
    }
}
