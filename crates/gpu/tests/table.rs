//! The op table against the registry, and device selection without a GPU.
//! These run everywhere.

#[test]
fn every_table_entry_is_a_primitive_with_a_cpu_kernel() {
    for e in gpu::table::ELEMENTWISE {
        let op = ops::lookup(e.op).unwrap_or_else(|| panic!("{} is not a primitive", e.op));
        assert!(
            op.kernel.is_some(),
            "{} has no CPU kernel to check against",
            e.op
        );
        assert_eq!(op.input_count(), e.arity + e.unread, "{}: arity", e.op);
        for p in e.params {
            assert!(
                op.param(p).is_some_and(|p| !p.is_input()),
                "{}: no attribute {p}",
                e.op
            );
        }
        assert!(
            !gpu::source::elementwise_storages(e).is_empty(),
            "{}: no kernel",
            e.op
        );
    }
    for op in ops::registry().values() {
        if gpu::table::has_gpu_kernel(op.name) {
            assert!(op.kernel.is_some(), "{} has no CPU kernel", op.name);
        }
    }
}

#[test]
fn coverage() {
    let (on_gpu, on_cpu) = gpu::coverage();
    let summary = format!(
        "{} primitives with kernels: {} with GPU kernels, {} on the CPU only",
        on_gpu.len() + on_cpu.len(),
        on_gpu.len(),
        on_cpu.len()
    );
    expect_test::expect!["435 primitives with kernels: 154 with GPU kernels, 281 on the CPU only"]
        .assert_eq(&summary);
    for must in [
        "MatMul",
        "BatchMatMul",
        "Conv2D",
        "Softmax",
        "LayerNorm",
        "Add",
        "Transpose",
    ] {
        assert!(on_gpu.contains(&must), "{must}");
    }
}

#[test]
fn device_selection_without_a_gpu() {
    let cpu = gpu::select(gpu::DeviceChoice::Cpu).unwrap();
    assert_eq!(cpu.device, exec::Device::Cpu);
    assert_eq!(cpu.note, "device: cpu");
    if let Err(why) = gpu::probe::all() {
        let auto = gpu::select(gpu::DeviceChoice::Auto).unwrap();
        assert_eq!(auto.device, exec::Device::Cpu);
        assert!(
            auto.note.starts_with("device: cpu (--device auto: "),
            "{}",
            auto.note
        );
        let err = gpu::select(gpu::DeviceChoice::Gpu).err().unwrap();
        assert_eq!(err, format!("--device gpu: {why}"));
    } else {
        let auto = gpu::select(gpu::DeviceChoice::Auto).unwrap();
        assert_eq!(auto.device, exec::Device::Gpu);
    }
    assert_eq!(
        gpu::DeviceChoice::parse("AUTO"),
        Some(gpu::DeviceChoice::Auto)
    );
    assert_eq!(gpu::DeviceChoice::parse("tpu"), None);
}

/// A CPU backend that names itself a device (so the executor sends every
/// primitive through it, as it does to the GPU backend) and records which
/// primitives it ran.
struct Recording(std::sync::Arc<std::sync::Mutex<std::collections::BTreeSet<&'static str>>>);

impl exec::Backend for Recording {
    fn device(&self) -> exec::Device {
        exec::Device::Gpu
    }
    fn supports(&self, op: &ops::OpDef) -> bool {
        exec::CpuBackend.supports(op)
    }
    fn run(
        &self,
        op: &'static ops::OpDef,
        call: &ops::KernelCall,
    ) -> Result<ops::KValue, ops::OpError> {
        self.0.lock().unwrap().insert(op.name);
        exec::CpuBackend.run(op, call)
    }
}

/// Every primitive the benchmark models' training steps call (`bench run
/// --device gpu`) has a GPU kernel: a gradient rule that starts emitting a
/// primitive the table lacks shows here, not as a slow step on a GPU.
#[test]
fn the_benchmark_steps_call_only_gpu_primitives() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/models");
    for (model, x_shape) in [
        ("mlp", vec![2, 784]),
        ("transformer", vec![1, 128, 256]),
        ("resnet", vec![1, 64, 32, 32]),
        ("lenet", vec![2, 1, 32, 32]),
    ] {
        let source = std::fs::read_to_string(root.join(format!("{model}.mir"))).unwrap();
        let analysis = analysis::analyze(&source);
        assert!(
            !analysis.has_errors(),
            "{model}: {:?}",
            analysis.diagnostics
        );
        let program = analysis.source.program();
        let called = std::sync::Arc::default();
        let backend = Box::new(Recording(std::sync::Arc::clone(&called)));
        let mut ex = exec::Executor::with_backend(&program, exec::ExecOptions::default(), backend);
        let n: usize = x_shape.iter().product();
        let x = tensor::Tensor::from_f32(
            x_shape.clone(),
            (0..n).map(|i| ((i % 17) as f32 - 8.0) / 10.0).collect(),
        )
        .unwrap();
        let batch = x_shape[0];
        let labels = tensor::Tensor::from_i64(
            tensor::DType::I32,
            vec![batch],
            (0..batch as i64).map(|i| i % 10).collect(),
        )
        .unwrap();
        let args = vec![ex.tensor(x), ex.tensor(labels)];
        ex.call("step", args)
            .unwrap_or_else(|e| panic!("{model}: {}", e.message));
        let called = called.lock().unwrap();
        let missing: Vec<_> = called
            .iter()
            .filter(|op| !gpu::table::has_gpu_kernel(op))
            .collect();
        assert!(missing.is_empty(), "{model}: no GPU kernel for {missing:?}");
        assert!(called.len() > 5, "{model}: {called:?}");
    }
}
