//! The CUDA backend of `mirdsl run --device gpu`.
//!
//! - [`GpuBackend`] implements [`exec::Backend`] on cudarc's driver API with
//!   dynamic loading; NVRTC and cuBLAS (CUDA 11, 12 or 13) are bound in
//!   [`libs`]. Everything is found at run time ([`probe`]), so the crate
//!   builds and its tests pass on machines without CUDA.
//! - Kernels: NVRTC source generated from the op table ([`table`],
//!   [`source`]) for elementwise, cast, reduction, softmax, normalisation and
//!   data-movement primitives; cuBLAS for matrix products and for convolution
//!   (im2col + GEMM). Every other primitive runs its CPU kernel (inputs copied
//!   to the host, the result copied back on next use); [`Stats`] counts both
//!   per primitive for `--verbose`.
//! - Tensors stay on the device between kernels: results are
//!   [`tensor::Tensor::from_device`] tensors, copied to the host only when
//!   something reads them there; a caching allocator reuses freed blocks.

mod backend;
pub mod device;
mod kernels;
pub mod libs;
pub mod probe;
pub mod source;
pub mod table;

use std::sync::Arc;

pub use backend::{GpuBackend, Stats, Syncer};
pub use probe::Unavailable;

/// What `--device` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceChoice {
    Cpu,
    Gpu,
    /// The GPU when a driver and a device are present, else the CPU.
    Auto,
}

impl DeviceChoice {
    pub fn parse(s: &str) -> Option<DeviceChoice> {
        match s.to_ascii_lowercase().as_str() {
            "cpu" => Some(DeviceChoice::Cpu),
            "gpu" | "cuda" => Some(DeviceChoice::Gpu),
            "auto" => Some(DeviceChoice::Auto),
            _ => None,
        }
    }
}

/// The backend `--device` chose, and what to say about it.
pub struct Selected {
    pub backend: Box<dyn exec::Backend>,
    pub device: exec::Device,
    /// For `--verbose`: which device, and why.
    pub note: String,
    /// Per-primitive GPU/CPU counts (GPU backend only).
    pub stats: Option<Arc<Stats>>,
}

/// The backend for `choice`; `Gpu` without a usable GPU is an error naming
/// what is missing, `Auto` then falls back to the CPU (and says why).
pub fn select(choice: DeviceChoice) -> Result<Selected, String> {
    let cpu = |note: String| Selected {
        backend: Box::new(exec::CpuBackend),
        device: exec::Device::Cpu,
        note,
        stats: None,
    };
    match choice {
        DeviceChoice::Cpu => Ok(cpu("device: cpu".into())),
        DeviceChoice::Gpu | DeviceChoice::Auto => match GpuBackend::new() {
            Ok(g) => Ok(Selected {
                note: format!(
                    "device: gpu ({}){}",
                    g.device_name(),
                    if choice == DeviceChoice::Auto {
                        ", chosen by --device auto"
                    } else {
                        ""
                    }
                ),
                stats: Some(g.stats()),
                device: exec::Device::Gpu,
                backend: Box::new(g),
            }),
            Err(e) if choice == DeviceChoice::Auto => {
                Ok(cpu(format!("device: cpu (--device auto: {})", e.short())))
            }
            Err(e) => Err(format!("--device gpu: {e}")),
        },
    }
}

/// NVRTC options for a unit: an architecture when one is known.
pub fn compile_options(arch: Option<&'static str>) -> Vec<String> {
    let mut options = vec!["--std=c++14".to_string()];
    if let Some(arch) = arch {
        options.push(format!("--gpu-architecture={arch}"));
    }
    options
}

/// Compiles a unit to PTX (no GPU needed, only NVRTC).
pub fn compile_unit(
    unit: &source::Unit,
    arch: Option<&'static str>,
) -> Result<cudarc::nvrtc::Ptx, String> {
    let nvrtc = libs::nvrtc().map_err(|e| probe::Unavailable::Nvrtc(e).to_string())?;
    nvrtc
        .compile(&unit.source, &unit.name, &compile_options(arch))
        .map(cudarc::nvrtc::Ptx::from_src)
        .map_err(|e| format!("NVRTC failed on unit `{}`: {e}", unit.name))
}

/// Every primitive with a CPU kernel, split into those with a GPU kernel and
/// those that always run on the CPU (sorted by name).
pub fn coverage() -> (Vec<&'static str>, Vec<&'static str>) {
    let mut ops: Vec<&'static ops::OpDef> = ops::registry()
        .values()
        .copied()
        .filter(|o| o.kernel.is_some())
        .collect();
    ops.sort_by_key(|o| o.name);
    ops.into_iter()
        .map(|o| o.name)
        .partition(|name| table::has_gpu_kernel(name))
}
