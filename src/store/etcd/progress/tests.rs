use std::time::{Duration, Instant};

use super::Progress;

#[test]
fn never_connected_is_not_current() {
    let progress = Progress::new(10);
    progress.confirmed(Instant::now(), 10);
    assert!(!progress.keeping_up());
}

#[test]
fn a_reconnected_watch_is_current_only_once_it_applied_a_later_confirmation() {
    let progress = Progress::new(10);
    // Confirmed before etcd confirmed the watch: proves nothing about
    // what the watch replays.
    let before = Instant::now();
    std::thread::sleep(Duration::from_millis(2));
    assert!(progress.connected());
    progress.confirmed(before, 10);
    assert!(!progress.keeping_up());
    // The first revision confirmed after the connect is the mark.
    progress.confirmed(Instant::now(), 25);
    assert!(!progress.keeping_up());
    progress.applied(24);
    assert!(!progress.keeping_up());
    progress.applied(25);
    assert!(progress.keeping_up());
}

#[test]
fn a_break_clears_currency_until_the_next_mark_is_reached() {
    let progress = Progress::new(10);
    progress.connected();
    progress.confirmed(Instant::now(), 10);
    assert!(progress.keeping_up());
    progress.disconnected();
    assert!(!progress.keeping_up());
    assert!(!progress.is_connected());
    std::thread::sleep(Duration::from_millis(2));
    assert!(progress.connected());
    // Connected again, and nothing read since: still not current, even
    // though everything read before the break was applied.
    assert!(!progress.keeping_up());
    progress.confirmed(Instant::now(), 40);
    assert!(!progress.keeping_up());
    progress.applied(40);
    assert!(progress.keeping_up());
}

#[test]
fn connecting_twice_keeps_the_first_connect() {
    let progress = Progress::new(0);
    assert!(progress.connected());
    progress.confirmed(Instant::now(), 3);
    assert!(!progress.connected());
    progress.applied(3);
    assert!(progress.keeping_up());
}
