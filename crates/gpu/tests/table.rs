//! The op table against the registry, and device selection without a GPU.
//! These run everywhere.

#[test]
fn every_table_entry_is_a_primitive_with_a_cpu_kernel() {
    for e in gpu::table::elementwise_ops() {
        let op = ops::lookup(e.op).unwrap_or_else(|| panic!("{} is not a primitive", e.op));
        assert!(
            op.kernel.is_some(),
            "{} has no CPU kernel to check against",
            e.op
        );
        assert_eq!(op.input_count(), e.arity() + e.unread, "{}: arity", e.op);
        for p in e.params() {
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

/// The table holds no CUDA: every elementwise kernel's expression is its
/// record's formula, turned into CUDA; and every op with a formula (and a
/// CPU kernel) has GPU kernels.
#[test]
fn every_expression_is_generated_from_a_record() {
    use gpu::source::Storage;
    for e in gpu::table::elementwise_ops() {
        let f = e.formula();
        for s in gpu::source::elementwise_storages(e) {
            let want = match s {
                Storage::F32 | Storage::F64 => f.cuda(),
                _ => f.cuda_int(),
            };
            assert_eq!(e.expression(s), Some(want.clone()), "{}", e.op);
            let unit = gpu::source::unit(&gpu::source::elementwise_unit_name(e.op))
                .unwrap_or_else(|| panic!("no unit for {}", e.op));
            assert!(unit.source.contains(&want), "{}: {want}", e.op);
            assert!(unit.source.contains(&ops::formula::cuda_prelude()));
        }
        // Float kernels need a float formula; integer kernels of an
        // integer-only formula use its own text.
        assert_eq!(e.float, f.float.is_some() && e.float, "{}", e.op);
        if f.float.is_none() {
            assert!(!e.float && (e.int || e.boolean), "{}", e.op);
        }
    }
    let mut missing = Vec::new();
    for op in ops::registry().values() {
        if op.traits.formula.is_some() && gpu::table::elementwise(op.name).is_none() {
            missing.push(op.name);
        }
    }
    missing.sort_unstable();
    assert!(
        missing.is_empty(),
        "formula ops without GPU kernels: {missing:?}"
    );
}

/// The generated CUDA of a few kernels, literally: literals are cast to the
/// compute type, helpers come from the prelude.
#[test]
fn generated_cuda_of_a_few_ops() {
    use gpu::source::Storage;
    let expr = |op: &str, s| gpu::table::elementwise(op).unwrap().expression(s).unwrap();
    assert_eq!(
        expr("GeLU", Storage::F32),
        "(T)0.5 * a * ((T)1.0 + tanh((T)0.7978845608 * (a + (T)0.044715 * a * a * a)))"
    );
    assert_eq!(expr("SiLU", Storage::F64), "a * sigm(a)");
    assert_eq!(
        expr("Elu", Storage::F32),
        "select(gt(a, (T)0.0), a, (T)p0 * expm1(a))"
    );
    assert_eq!(
        expr("ReLU", Storage::I64),
        "select(gt(a, (T)0.0), a, (T)0.0)"
    );
    assert_eq!(expr("Abs", Storage::I64), "select(lt(a, (T)0), -a, a)");
    assert_eq!(expr("Abs", Storage::F32), "fabs(a)");
    assert_eq!(expr("BitwiseAnd", Storage::I64), "a & b");
    assert_eq!(
        expr("LogicalAnd", Storage::U8),
        "both(ne(a, (T)0.0), ne(b, (T)0.0))"
    );
    assert_eq!(
        expr("ReLU6Grad", Storage::F32),
        "select(both(gt(b, (T)0.0), le(b, (T)6.0)), a, (T)0.0)"
    );
    let unit = gpu::source::unit("ew_SiLU").unwrap();
    assert!(unit.source.contains(
        "template <class T> __device__ __forceinline__ T sigm(T a) { T e = exp(-fabs(a)); return select(ge(a, (T)0.0), (T)1.0, e) / ((T)1.0 + e); }"
    ));
    assert!(
        unit.source.contains("y[i] = nrm((T)(a * sigm(a)), dt);"),
        "{}",
        unit.source
    );
    assert_eq!(unit.kernels, ["ew_SiLU_f32", "ew_SiLU_f64"]);
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
    expect_test::expect!["458 primitives with kernels: 155 with GPU kernels, 303 on the CPU only"]
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
