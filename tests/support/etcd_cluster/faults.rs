//! Faults for the three-member cluster beyond a kill: freezing a member
//! (SIGSTOP, as a stalled VM or a long GC pause looks to its peers) and
//! thawing it, and restarting a killed member on its own data directory.

use std::time::{Duration, Instant};

use super::super::etcd::signal;
use super::{member_client, EtcdCluster, Member};

impl EtcdCluster {
    fn pid(&self, i: usize) -> u32 {
        self.members[i]
            .child
            .as_ref()
            .expect("member is running")
            .id()
    }

    /// Waits until a member other than `old` (just killed or frozen)
    /// reports itself the leader, and returns when that was first seen
    /// (polled every 20 ms); panics after 15 s.
    pub(crate) async fn elected_without(&self, old: usize) -> Instant {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            for (i, m) in self.members.iter().enumerate() {
                if i == old || m.child.is_none() {
                    continue;
                }
                let status = async { member_client(&m.endpoint).await.ok()?.status().await.ok() };
                let Ok(Some(s)) = tokio::time::timeout(Duration::from_millis(200), status).await
                else {
                    continue;
                };
                if s.leader() != 0 && s.header().map(|h| h.member_id()) == Some(s.leader()) {
                    return Instant::now();
                }
            }
            assert!(
                Instant::now() < deadline,
                "no member but {old} took the lead:\n{}",
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops member `i` without killing it: its connections stay open and
    /// nothing on them answers until [`EtcdCluster::thaw`].
    pub(crate) fn freeze(&self, i: usize) {
        signal(self.pid(i), "STOP");
    }

    /// Lets a frozen member `i` run again.
    pub(crate) fn thaw(&self, i: usize) {
        signal(self.pid(i), "CONT");
    }

    /// Starts killed member `i` again on its data directory (it rejoins
    /// with its identity from there), then waits until every member agrees
    /// on a leader and the cluster takes a write.
    pub(crate) async fn restart(&mut self, i: usize) {
        assert!(self.members[i].child.is_none(), "member {i} is running");
        let m: &mut Member = &mut self.members[i];
        let child = m.spawn(&[]);
        m.child = Some(child);
        self.wait_ready().await;
    }
}
