//! Memory of ended sessions given back to the system. glibc's allocator keeps the heap
//! that freed sessions leave (their service tasks, channels and buffers are many small
//! allocations spread over the heap), so after a flood of sessions that end, by
//! `DELETE` or by idle expiry, the process would stay at its high-water mark. A task of
//! [`PackServer::serve_http`](crate::PackServer::serve_http) watches the number of open
//! sessions once a second and, when at least [`ENDED_BEFORE_TRIM`] have ended since the
//! last time, asks glibc to return its free memory (`malloc_trim(0)`, on a blocking
//! thread: it walks the free heap). Elsewhere than glibc this does nothing.

use std::sync::Arc;
use std::time::Duration;

use super::table::SessionTable;

/// How many sessions must have ended since the last trim before the next one.
pub(crate) const ENDED_BEFORE_TRIM: usize = 64;
/// How often the number of open sessions is read.
const PERIOD: Duration = Duration::from_secs(1);

/// Whether `peak` (the most sessions open since the last trim) and `now` (those open
/// now) call for a trim.
pub(crate) fn due(peak: usize, now: usize) -> bool {
    peak.saturating_sub(now) >= ENDED_BEFORE_TRIM
}

/// Gives the allocator's free memory back to the system, where the allocator can.
pub(crate) fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim has no preconditions; it only releases free heap pages.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Runs until dropped (aborted): trims after sessions of `manager` have ended in bulk.
pub(crate) async fn trim_after_sessions_end(manager: Arc<SessionTable>) {
    let mut tick = tokio::time::interval(PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut peak = 0;
    loop {
        tick.tick().await;
        let now = manager.len();
        peak = peak.max(now);
        if due(peak, now) {
            peak = now;
            // A trim of a large heap takes milliseconds: off the runtime's threads.
            let _ = tokio::task::spawn_blocking(trim).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_only_after_enough_sessions_ended() {
        assert!(!due(0, 0));
        assert!(!due(100, 100));
        assert!(!due(100, 100 - ENDED_BEFORE_TRIM + 1));
        assert!(due(100, 100 - ENDED_BEFORE_TRIM));
        assert!(due(2_000, 0));
        // More sessions open than at the peak (the peak is raised first) is no trim.
        assert!(!due(10, 20));
    }
}
