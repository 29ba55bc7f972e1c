//! Running shape rules and kernels defensively: a panic becomes a value the
//! caller reports (arithmetic overflow as such, anything else as a bug, with
//! where it happened), and a kernel can see that its run has been stopped.
//!
//! **Stopping.** The executor runs each kernel inside [`with_stop`]; a kernel
//! with long loops calls [`should_stop`] between iterations of its outer loop
//! (it costs an atomic load and, with a deadline, a clock read) and returns
//! early, with any result: the executor discards it and reports the
//! interruption. The shared helpers in [`crate::kernel`] (broadcasting loops,
//! large matrix products) already do.
//!
//! **Working memory.** The executor checks a result's size against its memory
//! budget before the kernel runs; a kernel that needs large temporary buffers
//! besides (a convolution's im2col matrix) asks [`scratch`] first, which
//! refuses what is beyond the budget left ([`with_scratch`]) with an error,
//! instead of an allocation that aborts the process.

use std::cell::{Cell, RefCell};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};
use std::time::Instant;

/// A panic caught by [`catch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panic {
    pub message: String,
    /// `file:line` where it was raised.
    pub location: Option<String>,
}

impl Panic {
    /// Whether it is integer arithmetic that overflowed (or a size too large
    /// for a buffer), as opposed to a broken invariant.
    pub fn is_overflow(&self) -> bool {
        self.message.contains("with overflow") || self.message.contains("capacity overflow")
    }
}

thread_local! {
    static GUARDED: Cell<u32> = const { Cell::new(0) };
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Runs `f`; a panic inside it is returned, not printed (the caller reports
/// it as a diagnostic or a run-time error). Panics elsewhere are printed as
/// usual.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, Panic> {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARDED.with(Cell::get) > 0 {
                let at = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()));
                LOCATION.with(|l| *l.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
    GUARDED.with(|g| g.set(g.get() + 1));
    let result = std::panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(g.get() - 1));
    result.map_err(|p| {
        let message = if let Some(s) = p.downcast_ref::<&str>() {
            s.to_string()
        } else if let Some(s) = p.downcast_ref::<String>() {
            s.clone()
        } else {
            "(no message)".into()
        };
        Panic {
            message,
            location: LOCATION.with(|l| l.borrow_mut().take()),
        }
    })
}

/// When a run must stop: a flag someone else sets (Ctrl-C, a cancelled
/// request) and a deadline.
#[derive(Debug, Clone, Default)]
pub struct Stop {
    pub flag: Option<Arc<AtomicBool>>,
    pub deadline: Option<Instant>,
}

impl Stop {
    /// Whether the flag is set or the deadline has passed.
    pub fn requested(&self) -> bool {
        self.flag
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
            || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    pub fn is_set(&self) -> bool {
        self.flag.is_some() || self.deadline.is_some()
    }
}

thread_local! {
    static STOP: RefCell<Option<Stop>> = const { RefCell::new(None) };
    static SCRATCH: Cell<Option<usize>> = const { Cell::new(None) };
    static REFUSED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (a kernel) allowing it `bytes` of temporary buffers ([`scratch`]);
/// also says whether [`scratch`] refused a buffer (the kernel's error is then
/// one of memory).
pub fn with_scratch<T>(bytes: usize, f: impl FnOnce() -> T) -> (T, bool) {
    struct Reset(Option<usize>, bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            SCRATCH.with(|s| s.set(self.0));
            REFUSED.with(|r| r.set(self.1));
        }
    }
    let _reset = Reset(
        SCRATCH.with(|s| s.replace(Some(bytes))),
        REFUSED.with(|r| r.replace(false)),
    );
    let out = f();
    (out, REFUSED.with(Cell::get))
}

/// Checks that a kernel may allocate `elements` temporary values of
/// `elem_size` bytes (`None`: a count that overflows); `what` names the
/// buffer. Unlimited outside [`with_scratch`].
pub fn scratch(
    op: &str,
    what: &str,
    elements: Option<usize>,
    elem_size: usize,
) -> Result<(), crate::OpError> {
    let bytes = elements.and_then(|n| n.checked_mul(elem_size));
    let allowed = SCRATCH.with(Cell::get);
    match (bytes, allowed) {
        (Some(b), Some(a)) if b <= a => Ok(()),
        (Some(_), None) => Ok(()),
        (None, _) => Err(crate::OpError::call(format!(
            "`{op}` would need a {what} whose size overflows a 64-bit integer"
        ))),
        (Some(b), Some(a)) => {
            use tensor::limits::format_bytes;
            REFUSED.with(|r| r.set(true));
            Err(crate::OpError::call(format!(
                "`{op}` needs a {what} of {} ({b} bytes) to compute its result, more than the memory budget leaves: {}",
                format_bytes(b),
                format_bytes(a)
            ))
            .with_note("`mirdsl run --max-memory SIZE` sets the budget"))
        }
    }
}

/// Runs `f` (a kernel) with `stop` visible to [`should_stop`] on this thread.
pub fn with_stop<T>(stop: &Stop, f: impl FnOnce() -> T) -> T {
    if !stop.is_set() {
        return f();
    }
    struct Reset(Option<Stop>);
    impl Drop for Reset {
        fn drop(&mut self) {
            let old = self.0.take();
            STOP.with(|s| *s.borrow_mut() = old);
        }
    }
    let old = STOP.with(|s| s.borrow_mut().replace(stop.clone()));
    let _reset = Reset(old);
    f()
}

/// Whether the run this kernel belongs to has been asked to stop. Cheap
/// enough for the outer loop of any kernel; `false` outside the executor.
pub fn should_stop() -> bool {
    STOP.with(|s| s.borrow().as_ref().is_some_and(Stop::requested))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_values() {
        let p = catch(|| {
            let v: Vec<i64> = vec![i64::MAX, 2];
            v.iter().product::<i64>()
        });
        // Debug builds check overflow; release builds wrap.
        if cfg!(debug_assertions) {
            let p = p.unwrap_err();
            assert!(p.is_overflow(), "{p:?}");
            assert!(p.location.is_some());
        }
        let p = catch(|| -> i32 { panic!("broken") }).unwrap_err();
        assert_eq!(p.message, "broken");
        assert!(!p.is_overflow());
        assert_eq!(catch(|| 3), Ok(3));
    }

    #[test]
    fn stop_is_seen_inside_with_stop_only() {
        let flag = Arc::new(AtomicBool::new(false));
        let stop = Stop {
            flag: Some(flag.clone()),
            deadline: None,
        };
        assert!(!should_stop());
        with_stop(&stop, || {
            assert!(!should_stop());
            flag.store(true, Ordering::Relaxed);
            assert!(should_stop());
        });
        assert!(!should_stop());
        let past = Stop {
            flag: None,
            deadline: Some(Instant::now()),
        };
        assert!(with_stop(&past, should_stop));
    }
}
