//! Execution of MindIR programs: `mirdsl run` on the CPU with MindSpore's numerics.
//!
//! - [`Executor`] runs a [`ir::Program`]'s graphs: an explicit-stack machine
//!   (deep recursion never overflows the native stack; a depth limit turns a
//!   runaway recursion into a "recursion too deep" fault), closures that
//!   capture their free variables by value, `Switch` that runs only the chosen
//!   branch, metafunctions (`grad`, `value_and_grad`, `vjp`) through the
//!   `autodiff` transformation, and weights initialised on first use.
//! - [`Backend`] is the interface to kernels; [`CpuBackend`] runs the
//!   registry's (`ops`).
//! - Memory: each graph's plan knows the last use of every value; the executor
//!   drops values there, and [`Executor::memory`] reports current and peak
//!   bytes of live tensors.
//! - Faults are [`RunError`]s with the source span of the failing node.
//! - [`args`] turns `--arg`/`--dim` into entry arguments; [`output`] prints
//!   results as JSON, text or `.npy` files.

pub mod args;
pub mod backend;
pub mod error;
mod machine;
pub mod output;
mod plan;
pub mod value;
pub mod weights;

pub use backend::{backend_for, Backend, CpuBackend, Device};
pub use error::{ErrorKind, RunError, TraceEntry};
pub use machine::observe::{FrameView, Frames, Observer};
pub use machine::{ExecOptions, Executor, DEFAULT_MAX_DEPTH};
pub use value::{Closure, Func, MemCounter, MemStats, PrimFn, TensorVal, Value};
