//! Small helpers for timing and summarising samples.

use std::time::{Duration, Instant};

/// Runs `f` once and returns its result and how long it took.
pub fn time<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

/// The CPU time this thread has used: on a machine shared with other work,
/// a single-threaded benchmark's CPU time is its wall time on an idle machine
/// (near enough), where the wall time also counts the time it waited.
pub fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid pointer to a timespec; the clock exists on Linux.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
    if !ok {
        return Duration::ZERO;
    }
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Runs `f` once and returns its result, its wall time and this thread's CPU
/// time in it.
pub fn time_cpu<T>(f: impl FnOnce() -> T) -> (T, Duration, Duration) {
    let cpu = thread_cpu();
    let (out, wall) = time(f);
    (out, wall, thread_cpu().saturating_sub(cpu))
}

/// Summary of a set of timings.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub min: Duration,
    pub median: Duration,
    pub p95: Duration,
    pub max: Duration,
}

impl Summary {
    pub fn of(samples: &[Duration]) -> Summary {
        assert!(!samples.is_empty(), "no samples");
        let mut sorted = samples.to_vec();
        sorted.sort();
        let n = sorted.len();
        // Nearest-rank percentile.
        let rank = |p: f64| sorted[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        Summary {
            min: sorted[0],
            median: if n % 2 == 1 {
                sorted[n / 2]
            } else {
                (sorted[n / 2 - 1] + sorted[n / 2]) / 2
            },
            p95: rank(0.95),
            max: sorted[n - 1],
        }
    }
}

/// Megabytes (10^6 bytes) per second.
pub fn mb_per_s(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
