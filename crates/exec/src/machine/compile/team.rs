//! The plans' own worker threads: while a plan runs they spin between its
//! parallel steps instead of sleeping, so a step's parts start at once. On
//! a virtual machine waking a sleeping thread (a halted virtual CPU) costs
//! tens of microseconds, as much as a small kernel; rayon's workers sleep
//! after a few microseconds of idleness. A worker parks after
//! [`SPIN`] without work, so an idle process uses no CPU.
//!
//! One caller at a time owns the team (a plan run); a kernel nested in a
//! part runs on its own thread (see `kernels::one_thread`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a worker spins for its next part before it parks.
const SPIN: Duration = Duration::from_micros(200);

const IDLE: u32 = 0;
const GIVEN: u32 = 1;
const DONE: u32 = 2;

/// A part to run: a borrowed closure (the owner waits for every part before
/// the borrow ends) and the part's index.
#[derive(Clone, Copy)]
struct Job(*const (dyn Fn(usize) + Sync), usize);
unsafe impl Send for Job {}

struct Worker {
    state: AtomicU32,
    job: Mutex<Option<Job>>,
    panicked: AtomicBool,
    thread: OnceLock<std::thread::Thread>,
}

pub(crate) struct Team {
    workers: Vec<Arc<Worker>>,
    owner: Mutex<()>,
}

fn work(w: Arc<Worker>) {
    let mut idle_since = Instant::now();
    loop {
        let mut spins = 0u32;
        while w.state.load(Ordering::Acquire) != GIVEN {
            spins += 1;
            if spins.is_multiple_of(64) && idle_since.elapsed() > SPIN {
                std::thread::park_timeout(Duration::from_millis(100));
            } else {
                std::hint::spin_loop();
            }
        }
        let job = w.job.lock().unwrap().take();
        if let Some(Job(f, part)) = job {
            // SAFETY: the owner keeps the closure alive until this part is DONE.
            let f = unsafe { &*f };
            let ok = catch_unwind(AssertUnwindSafe(|| super::kernels::one_thread(|| f(part))));
            if ok.is_err() {
                w.panicked.store(true, Ordering::Relaxed);
            }
        }
        w.state.store(DONE, Ordering::Release);
        idle_since = Instant::now();
    }
}

impl Team {
    /// The team of `rayon::current_num_threads() - 1` workers, started on
    /// first use; `None` on one thread.
    pub(crate) fn get() -> Option<&'static Team> {
        static TEAM: OnceLock<Option<Team>> = OnceLock::new();
        TEAM.get_or_init(|| {
            let n = rayon::current_num_threads().saturating_sub(1);
            if n == 0 {
                return None;
            }
            let mut workers = Vec::new();
            for i in 0..n {
                let w = Arc::new(Worker {
                    state: AtomicU32::new(IDLE),
                    job: Mutex::new(None),
                    panicked: AtomicBool::new(false),
                    thread: OnceLock::new(),
                });
                let handle = std::thread::Builder::new()
                    .name(format!("mirdsl-plan-{i}"))
                    .stack_size(16 << 20)
                    .spawn({
                        let w = w.clone();
                        move || work(w)
                    })
                    .ok()?;
                let _ = w.thread.set(handle.thread().clone());
                workers.push(w);
            }
            Some(Team {
                workers,
                owner: Mutex::new(()),
            })
        })
        .as_ref()
    }

    /// The number of parts [`Team::run`] runs at once.
    pub(crate) fn size(&self) -> usize {
        self.workers.len() + 1
    }

    /// Runs `f(0)` here and `f(1)`..`f(parts - 1)` on the workers, and
    /// returns when all are done; `None` (nothing run) when another caller
    /// owns the team.
    pub(crate) fn run(&self, parts: usize, f: &(dyn Fn(usize) + Sync)) -> Option<()> {
        let _owner = self.owner.try_lock().ok()?;
        let parts = parts.min(self.size());
        // SAFETY (of the lifetime erased here): every part is DONE before
        // this function returns, panics included.
        let job: *const (dyn Fn(usize) + Sync) = unsafe { std::mem::transmute(f) };
        for (k, w) in self.workers.iter().take(parts - 1).enumerate() {
            *w.job.lock().unwrap() = Some(Job(job, k + 1));
            w.state.store(GIVEN, Ordering::Release);
            if let Some(t) = w.thread.get() {
                t.unpark();
            }
        }
        let mine = catch_unwind(AssertUnwindSafe(|| super::kernels::one_thread(|| f(0))));
        let mut panicked = mine.is_err();
        for w in self.workers.iter().take(parts - 1) {
            while w.state.load(Ordering::Acquire) != DONE {
                std::hint::spin_loop();
            }
            w.state.store(IDLE, Ordering::Relaxed);
            panicked |= w.panicked.swap(false, Ordering::Relaxed);
        }
        if panicked {
            panic!("a compiled kernel's part panicked");
        }
        Some(())
    }
}
