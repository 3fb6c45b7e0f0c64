//! Faults for the three-member cluster beyond a kill: freezing a member
//! (SIGSTOP, as a stalled VM or a long GC pause looks to its peers) and
//! thawing it, and restarting a killed member on its own data directory.

use std::process::Command;

use super::{EtcdCluster, Member};

/// Sends `signal` (a `kill` signal name) to the process `pid`.
fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{signal} {pid}: {status}");
}

impl EtcdCluster {
    fn pid(&self, i: usize) -> u32 {
        self.members[i]
            .child
            .as_ref()
            .expect("member is running")
            .id()
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
