//! [`GpuBackend`]: the [`exec::Backend`] on CUDA, with per-primitive counts of
//! where calls ran.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use exec::{Backend, Device as ExecDevice};
use ops::{KValue, KernelCall, OpDef, OpError};

use crate::device::Device;
use crate::probe::{self, Unavailable};

/// How many calls of each primitive ran on the GPU and on the CPU.
#[derive(Debug, Default)]
pub struct Stats {
    counts: Mutex<BTreeMap<&'static str, (usize, usize)>>,
}

impl Stats {
    fn count(&self, op: &'static str, gpu: bool) {
        if let Ok(mut c) = self.counts.lock() {
            let e = c.entry(op).or_default();
            if gpu {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
        }
    }

    /// `(primitive, calls on the GPU, calls on the CPU)`, by name.
    pub fn counts(&self) -> Vec<(&'static str, usize, usize)> {
        self.counts
            .lock()
            .map(|c| c.iter().map(|(k, v)| (*k, v.0, v.1)).collect())
            .unwrap_or_default()
    }

    /// Lines for `--verbose`: what ran where, fallbacks named.
    pub fn report(&self) -> Vec<String> {
        let counts = self.counts();
        let gpu: Vec<String> = counts
            .iter()
            .filter(|c| c.1 > 0)
            .map(|(op, g, _)| format!("{op} x{g}"))
            .collect();
        let cpu: Vec<String> = counts
            .iter()
            .filter(|c| c.2 > 0)
            .map(|(op, _, c)| format!("{op} x{c}"))
            .collect();
        let mut lines = vec![format!(
            "gpu: on the GPU: {}",
            if gpu.is_empty() {
                "nothing".into()
            } else {
                gpu.join(", ")
            }
        )];
        if !cpu.is_empty() {
            lines.push(format!(
                "gpu: CPU fallback (copied to the host and back): {}",
                cpu.join(", ")
            ));
        }
        lines
    }
}

/// Waits for the backend's queued work (see [`GpuBackend::syncer`]).
#[derive(Clone)]
pub struct Syncer(Arc<cudarc::driver::CudaStream>);

impl Syncer {
    pub fn synchronize(&self) -> Result<(), String> {
        self.0
            .synchronize()
            .map_err(|e| format!("synchronising: {e}"))
    }
}

/// The CUDA backend: device 0, kernels compiled on first use.
pub struct GpuBackend {
    dev: Device,
    stats: Arc<Stats>,
}

impl GpuBackend {
    /// Starts on device 0, or says what is missing.
    pub fn new() -> Result<GpuBackend, Unavailable> {
        probe::all()?;
        let dev = Device::open().map_err(Unavailable::Failed)?;
        Ok(GpuBackend {
            dev,
            stats: Arc::default(),
        })
    }

    /// The device's name and compute capability.
    pub fn device_name(&self) -> &str {
        &self.dev.name
    }

    /// Where calls ran so far (shared: it stays readable after the backend
    /// moves into an executor).
    pub fn stats(&self) -> Arc<Stats> {
        self.stats.clone()
    }

    /// Waits for queued work (for timing).
    pub fn synchronize(&self) -> Result<(), String> {
        self.dev.synchronize()
    }

    /// A handle that waits for queued work after the backend has moved into
    /// an executor.
    pub fn syncer(&self) -> Syncer {
        Syncer(self.dev.stream.clone())
    }

    /// Bytes of device memory in use now, and at most.
    pub fn memory(&self) -> (usize, usize) {
        self.dev.pool.usage()
    }
}

impl Backend for GpuBackend {
    fn device(&self) -> ExecDevice {
        ExecDevice::Gpu
    }

    /// Every primitive with a CPU kernel runs: on the GPU where it has a
    /// kernel for the call, else on the CPU.
    fn supports(&self, op: &OpDef) -> bool {
        op.kernel.is_some()
    }

    fn run(&self, op: &'static OpDef, call: &KernelCall) -> Result<KValue, OpError> {
        // cuBLAS needs the context current on the calling thread.
        self.dev
            .ctx
            .bind_to_thread()
            .map_err(|e| OpError::call(format!("on the GPU: binding the CUDA context: {e}")))?;
        match crate::kernels::run(&self.dev, op, call) {
            Ok(Some(v)) => {
                self.stats.count(op.name, true);
                Ok(v)
            }
            Ok(None) => {
                self.stats.count(op.name, false);
                match op.kernel {
                    Some(k) => k(call),
                    None => Err(OpError::call(format!("`{}` has no kernel", op.name))),
                }
            }
            Err(e) => Err(OpError::call(format!("on the GPU: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Stats;

    #[test]
    fn the_report_names_gpu_and_fallback_primitives() {
        let s = Stats::default();
        s.count("MatMul", true);
        s.count("MatMul", true);
        s.count("ReLU", true);
        s.count("Cummax", false);
        assert_eq!(
            s.report(),
            [
                "gpu: on the GPU: MatMul x2, ReLU x1",
                "gpu: CPU fallback (copied to the host and back): Cummax x1",
            ]
        );
        assert_eq!(Stats::default().report(), ["gpu: on the GPU: nothing"]);
    }
}
