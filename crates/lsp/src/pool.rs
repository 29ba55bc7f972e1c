//! One pool of worker threads for all the server's work: a fixed number of
//! threads with big stacks, a queue with diagnostics first, and tasks that
//! hold a database snapshot only while they may still use it.
//!
//! A write to the database waits until every other handle is gone. A queued
//! task's snapshot would make the write wait for the queue; so before each
//! write the server calls [`Pool::invalidate`], which takes the snapshots
//! out of the queued tasks (they then answer `ContentModified`, or do
//! nothing) and drops queued diagnostics tasks (newer ones follow the edit).
//! Running tasks hold theirs: salsa cancels their queries and they unwind.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};

use db::RootDb;

/// What a task does with its snapshot (`None`: taken away by a newer edit).
pub type Work = Box<dyn FnOnce(Option<RootDb>) + Send>;

pub struct Task {
    /// Published diagnostics of one document: run before requests, and a
    /// newer one replaces a queued one.
    pub diagnostics_of: Option<String>,
    pub snapshot: Option<RootDb>,
    pub work: Work,
}

#[derive(Default)]
struct Queue {
    tasks: VecDeque<Task>,
    closed: bool,
}

#[derive(Clone)]
pub struct Pool {
    shared: Arc<(Mutex<Queue>, Condvar)>,
}

impl Pool {
    /// `threads` workers, each with a stack of `stack` bytes.
    pub fn new(threads: usize, stack: usize) -> Pool {
        let pool = Pool {
            shared: Arc::new((Mutex::new(Queue::default()), Condvar::new())),
        };
        for i in 0..threads {
            let shared = pool.shared.clone();
            std::thread::Builder::new()
                .name(format!("lsp-worker-{i}"))
                .stack_size(stack)
                .spawn(move || worker(shared))
                .expect("a worker thread starts");
        }
        pool
    }

    pub fn submit(&self, task: Task) {
        let (lock, ready) = &*self.shared;
        let mut queue = lock.lock().unwrap();
        match &task.diagnostics_of {
            Some(uri) => {
                queue
                    .tasks
                    .retain(|t| t.diagnostics_of.as_deref() != Some(uri.as_str()));
                // After the other diagnostics tasks, before requests.
                let at = queue
                    .tasks
                    .iter()
                    .position(|t| t.diagnostics_of.is_none())
                    .unwrap_or(queue.tasks.len());
                queue.tasks.insert(at, task);
            }
            None => queue.tasks.push_back(task),
        }
        ready.notify_one();
    }

    /// Takes the snapshots out of the queued tasks and drops queued
    /// diagnostics tasks (see the module docs).
    pub fn invalidate(&self) {
        let (lock, _) = &*self.shared;
        let mut queue = lock.lock().unwrap();
        queue.tasks.retain(|t| t.diagnostics_of.is_none());
        for t in &mut queue.tasks {
            t.snapshot = None;
        }
    }

    /// Stops the workers once the queue is empty.
    pub fn close(&self) {
        let (lock, ready) = &*self.shared;
        lock.lock().unwrap().closed = true;
        ready.notify_all();
    }
}

fn worker(shared: Arc<(Mutex<Queue>, Condvar)>) {
    let (lock, ready) = &*shared;
    loop {
        let task = {
            let mut queue = lock.lock().unwrap();
            loop {
                if let Some(t) = queue.tasks.pop_front() {
                    break t;
                }
                if queue.closed {
                    return;
                }
                queue = ready.wait(queue).unwrap();
            }
        };
        // A task catches its own panics; this only keeps the thread alive.
        let _ =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (task.work)(task.snapshot)));
    }
}
