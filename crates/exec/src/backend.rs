//! The interface between the executor and kernels.
//!
//! The executor gives a backend one primitive call at a time, after the
//! primitive's shape rule has accepted the inputs: it never sees structural
//! primitives (tuples, `Switch`, `Partial`, ...), which the executor runs itself.
//! The CPU backend runs the registry's kernels (`ops::OpDef::kernel`). A device
//! backend implements the same trait; values stay `tensor::Tensor`s, whose
//! data may live on the device only (`Tensor::from_device`) and is copied to
//! the host when something reads it there.

use ops::{KValue, KernelCall, OpDef, OpError};

/// Where primitives run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Device {
    Cpu,
    Gpu,
}

impl Device {
    pub fn name(self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Gpu => "gpu",
        }
    }
}

/// Runs primitives' kernels (`Send`: compiled plans run on a thread of
/// rayon's pool).
pub trait Backend: Send {
    /// The device it runs on.
    fn device(&self) -> Device;

    /// Whether it has a kernel for `op`.
    fn supports(&self, op: &OpDef) -> bool;

    /// Runs `op` on inputs its shape rule has accepted.
    fn run(&self, op: &'static OpDef, call: &KernelCall) -> Result<KValue, OpError>;
}

/// The registry's CPU kernels.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn device(&self) -> Device {
        Device::Cpu
    }

    fn supports(&self, op: &OpDef) -> bool {
        op.kernel.is_some()
    }

    fn run(&self, op: &'static OpDef, call: &KernelCall) -> Result<KValue, OpError> {
        match op.kernel {
            Some(kernel) => kernel(call),
            None => Err(OpError::call(format!(
                "`{}` has no CPU kernel yet",
                op.name
            ))),
        }
    }
}

/// The backend for `device`, or why there is none. The CUDA backend lives in
/// the `gpu` crate, above this one (`gpu::select`); this crate alone has none.
pub fn backend_for(device: Device) -> Result<Box<dyn Backend>, String> {
    match device {
        Device::Cpu => Ok(Box::new(CpuBackend)),
        Device::Gpu => Err(
            "the exec crate has no GPU backend (the `gpu` crate provides it); run on the CPU with `--device cpu`"
                .into(),
        ),
    }
}
