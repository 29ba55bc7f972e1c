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
        assert_eq!(op.input_count(), e.arity, "{}: arity", e.op);
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
    for (_, names) in gpu::table::STRUCTURED {
        for name in *names {
            let op = ops::lookup(name).unwrap_or_else(|| panic!("{name} is not a primitive"));
            assert!(op.kernel.is_some(), "{name} has no CPU kernel");
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
    expect_test::expect!["435 primitives with kernels: 153 with GPU kernels, 282 on the CPU only"]
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
