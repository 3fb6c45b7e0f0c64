//! The Rust client's follower program (the fleet contract in fleet.rs):
//! `reconnect_storm followers --url … --rings … --followers N --protocol …`.
//! Each follower is a `RingClient` with the library's defaults, as an
//! application builds one; only the transport is chosen.

use std::io::Write as _;
use std::time::Duration;

use ringd::client::{RingClient, RingEvent, WatchMode};
use tokio::sync::{broadcast, mpsc};

#[derive(clap::Args, Debug)]
pub(crate) struct Followers {
    #[arg(long)]
    url: String,
    /// Comma-separated; follower i follows ring i mod R.
    #[arg(long, value_delimiter = ',')]
    rings: Vec<String>,
    #[arg(long)]
    followers: usize,
    /// `sse` (the default mode: streams, long-polls if they cannot get
    /// through) or `long-poll`.
    #[arg(long)]
    protocol: String,
}

pub(crate) fn run(args: Followers) {
    let mode = match args.protocol.as_str() {
        "sse" => WatchMode::Auto,
        "long-poll" => WatchMode::LongPoll,
        other => panic!("--protocol is sse or long-poll, not {other}"),
    };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async move {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut clients = Vec::with_capacity(args.followers);
        for i in 0..args.followers {
            let ring = &args.rings[i % args.rings.len()];
            let client = RingClient::builder(&[&args.url], ring)
                .watch_mode(mode)
                .start()
                .expect("a valid client");
            tokio::spawn(report(i, client.subscribe(), client.version(), tx.clone()));
            clients.push(client);
        }
        drop(tx);
        tokio::spawn(write_lines(rx));
        // Until the driver goes away (stdin closes) or kills this process.
        tokio::task::spawn_blocking(|| std::io::copy(&mut std::io::stdin(), &mut std::io::sink()))
            .await
            .ok();
        drop(clients);
    });
}

/// Sends `(i, version)` for each version follower `i` applies.
async fn report(
    i: usize,
    mut events: broadcast::Receiver<RingEvent>,
    held: Option<u64>,
    tx: mpsc::UnboundedSender<(usize, u64)>,
) {
    // A version applied before the subscription began.
    if let Some(v) = held {
        let _ = tx.send((i, v));
    }
    loop {
        match events.recv().await {
            Ok(RingEvent::Applied(change)) => {
                if tx.send((i, change.to)).is_err() {
                    return;
                }
            }
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

/// Writes what arrived since the last write as one batch of lines.
async fn write_lines(mut rx: mpsc::UnboundedReceiver<(usize, u64)>) {
    let mut batch = Vec::new();
    while rx.recv_many(&mut batch, 4096).await > 0 {
        let mut text = String::with_capacity(batch.len() * 12);
        for (i, v) in batch.drain(..) {
            text.push_str(&format!("{i} {v}\n"));
        }
        let written = {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes()).and_then(|()| out.flush())
        };
        if written.is_err() {
            return;
        }
        // Lines from the same instant go out together.
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}
