//! [`GpuBackend`]: the [`exec::Backend`] on CUDA, with per-primitive counts of
//! where calls ran.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use exec::{Backend, Device as ExecDevice};
use ops::{KValue, KernelCall, OpDef, OpError};

use crate::device::Device;
use crate::probe::{self, Unavailable};

/// How many calls of each primitive ran on the GPU and on the CPU, and,
/// where `MIRDSL_GPU_PROFILE` is set, how long they took.
#[derive(Debug, Default)]
pub struct Stats {
    counts: Mutex<BTreeMap<&'static str, (usize, usize)>>,
    times: Mutex<BTreeMap<&'static str, Duration>>,
}

impl Stats {
    fn time(&self, op: &'static str, d: Duration) {
        if let Ok(mut t) = self.times.lock() {
            *t.entry(op).or_default() += d;
        }
    }

    /// `(primitive, total time)`, longest first (empty unless profiling).
    pub fn times(&self) -> Vec<(&'static str, Duration)> {
        let mut v: Vec<_> = self
            .times
            .lock()
            .map(|t| t.iter().map(|(k, v)| (*k, *v)).collect())
            .unwrap_or_default();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }

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
        let times = self.times();
        if !times.is_empty() {
            let total: Duration = times.iter().map(|t| t.1).sum();
            let each: Vec<String> = times
                .iter()
                .map(|(op, d)| format!("{op} {:.3}", d.as_secs_f64() * 1e3))
                .collect();
            lines.push(format!(
                "gpu: time per primitive (ms, each call synchronised): {:.3} in all: {}",
                total.as_secs_f64() * 1e3,
                each.join(", ")
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
    /// `MIRDSL_GPU_PROFILE`: every call waits for the device before and
    /// after, and its time is kept per primitive (slower, but it says where
    /// a step's time goes).
    profile: bool,
}

impl GpuBackend {
    /// Starts on device 0, or says what is missing.
    pub fn new() -> Result<GpuBackend, Unavailable> {
        probe::all()?;
        let dev = Device::open().map_err(Unavailable::Failed)?;
        Ok(GpuBackend {
            dev,
            stats: Arc::default(),
            profile: std::env::var_os("MIRDSL_GPU_PROFILE").is_some_and(|v| !v.is_empty()),
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
        if self.profile {
            self.dev.synchronize().map_err(OpError::call)?;
            let start = Instant::now();
            let r = self.run_here(op, call);
            self.dev.synchronize().map_err(OpError::call)?;
            self.stats.time(op.name, start.elapsed());
            return r;
        }
        self.run_here(op, call)
    }
}

impl GpuBackend {
    /// `op` on the GPU where it has a kernel for the call, else on the CPU.
    fn run_here(&self, op: &'static OpDef, call: &KernelCall) -> Result<KValue, OpError> {
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

    #[test]
    fn profiled_times_are_reported_longest_first() {
        let s = Stats::default();
        s.count("MatMul", true);
        s.time("ReLU", std::time::Duration::from_micros(500));
        s.time("MatMul", std::time::Duration::from_millis(2));
        s.time("MatMul", std::time::Duration::from_millis(1));
        assert_eq!(
            s.report()[1],
            "gpu: time per primitive (ms, each call synchronised): 3.500 in all: MatMul 3.000, ReLU 0.500"
        );
    }
}
