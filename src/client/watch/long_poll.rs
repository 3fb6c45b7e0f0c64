//! Following a ring by long-polling its snapshot, for when streams cannot
//! get through.

use std::time::Duration;

use reqwest::{Method, StatusCode};

use crate::client::http::decode_snapshot;
use crate::client::Transport;

use super::{Failure, Watch};

/// Most missing versions a long-poll client fetches one by one; a larger
/// gap is bridged by jumping to the newest version.
const MAX_GAP: u64 = 64;

impl Watch {
    /// One long-poll: returns after a new version was applied or the wait
    /// ran out.
    pub(super) async fn long_poll(&mut self) -> Result<(), Failure> {
        let ring = self.shared.ring.clone();
        let held = self.resume_after();
        let wait = self.long_poll_wait;
        let path = match held {
            Some(v) => format!(
                "/v1/rings/{ring}/snapshot?after={v}&wait={}",
                crate::wire::duration::format_wait(wait)
            ),
            None => format!("/v1/rings/{ring}/snapshot"),
        };
        // The server may add up to 1/16 of the wait as jitter.
        let limit = wait + wait / 16 + Duration::from_secs(10);
        let (resp, server) = self
            .endpoints
            .send(Method::GET, &path, None, &[], Some(limit))
            .await
            .map_err(|e| self.refused(e))?;
        self.connected(Transport::LongPoll, &server);
        if resp.status() == StatusCode::NOT_MODIFIED {
            self.backoff.reset();
            return Ok(());
        }
        let mut reset = resp
            .headers()
            .get(crate::wire::headers::RESET_HEADER)
            .is_some_and(|v| v.as_bytes() == b"true");
        let snapshot = decode_snapshot(resp, &server)
            .await
            .map_err(|e| Failure::Retry {
                server: Some(server.clone()),
                error: e.to_string(),
            })?;
        self.backoff.reset();
        if let (Some(h), false) = (held, reset) {
            // A long-poll answers with the newest version; fetch the ones in
            // between so subscribers see every version, as on a stream.
            if snapshot.version > h + 1 + MAX_GAP {
                reset = true;
            } else {
                for v in h + 1..snapshot.version {
                    let path = format!("/v1/rings/{ring}/snapshots/{v}");
                    match self.endpoints.get_snapshot(&path).await {
                        Ok(s) => self.apply(s, false).await,
                        Err(e) if matches!(e.status(), Some(404 | 410)) => {
                            reset = true;
                            break;
                        }
                        Err(e) => return Err(self.refused(e)),
                    }
                }
            }
        }
        self.apply(snapshot, reset).await;
        Ok(())
    }
}
