//! Whole training steps: trained here, exported, imported back and (with
//! MindSpore) trained there, to the same three losses.

use std::path::Path;
use std::process::Command;

use crate::{classes, close, dir, floats, losses, mirdsl, numbers, ok, scalar, Input};

/// Trains `file`'s `train_step` three steps here, exports it, and trains the
/// export: imported back, and in MindSpore where there is one.
fn train_and_export(file: &str, inputs: &[Input]) {
    // One folder per call: tests of one file run at once.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let scratch = std::env::temp_dir().join(format!(
        "mirdsl-training-{}-{}-{call}",
        file.trim_end_matches(".mir"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let source = dir().join(file);
    let source = source.to_str().unwrap();
    ok("check", mirdsl(&["check", source]));
    let mut run = vec![
        "run",
        source,
        "--entry",
        "train_step",
        "--steps",
        "3",
        "--format",
        "json",
    ];
    let mut npys = Vec::new();
    let mut arg_flags = Vec::new();
    for input in inputs {
        let path = scratch.join(format!("{}.npy", input.name));
        std::fs::write(&path, tensor::npy::write(&input.value)).unwrap();
        arg_flags.push(format!("{}={}", input.name, path.display()));
        npys.push(path.display().to_string());
    }
    for a in &arg_flags {
        run.push("--arg");
        run.push(a);
    }
    let here = losses(&ok("run", mirdsl(&run)));
    assert_eq!(here.len(), 3);
    assert!(here.iter().all(|l| l.is_finite()), "{here:?}");
    assert!(here[2] < here[0], "{file} trains: {here:?}");

    // The gradient program of the loss with respect to every weight checks
    // and runs on its own (`mirdsl grad` carries the weights and graphs it
    // needs), on the step's inputs.
    let grad = scratch.join("grad.mir");
    std::fs::write(
        &grad,
        ok(
            "grad",
            mirdsl(&["grad", source, "--entry", "loss", "--wrt", "weights"]),
        ),
    )
    .unwrap();
    let grad_s = grad.to_str().unwrap();
    ok("check of the gradient program", mirdsl(&["check", grad_s]));
    let grad_text = std::fs::read_to_string(&grad).unwrap();
    let signature = grad_text
        .lines()
        .find(|l| l.starts_with("graph grad_loss("))
        .expect("the gradient's entry");
    let mut grad_run = vec!["run", grad_s, "--entry", "grad_loss", "--format", "json"];
    // The loss's inputs (a step may take more: Adam's powers, `world_size`).
    for (input, a) in inputs.iter().zip(&arg_flags) {
        if [format!("({}: ", input.name), format!(", {}: ", input.name)]
            .iter()
            .any(|p| signature.contains(p.as_str()))
        {
            grad_run.push("--arg");
            grad_run.push(a);
        }
    }
    let mut grads = Vec::new();
    numbers(
        &serde_json::from_str(&ok("run of the gradient program", mirdsl(&grad_run))).unwrap(),
        &mut grads,
    );
    assert!(
        !grads.is_empty() && grads.iter().all(|g| g.is_finite()),
        "{file}: gradients {grads:?}"
    );

    let model = scratch.join("step.mindir");
    let model_s = model.to_str().unwrap();
    ok(
        "export",
        mirdsl(&["export", source, "--entry", "train_step", "-o", model_s]),
    );
    // Imported back, the exported step trains to the same losses.
    let imported = scratch.join("imported.mir");
    ok(
        "import",
        mirdsl(&["import", model_s, "-o", imported.to_str().unwrap()]),
    );
    let mut rerun = run.clone();
    rerun[1] = imported.to_str().unwrap();
    rerun[3] = "main";
    let back = losses(&ok("run of the import", mirdsl(&rerun)));
    assert!(
        close(&here, &back),
        "{file}: mirdsl {here:?}, imported {back:?}"
    );

    match test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    ) {
        None => {}
        Some(python) => {
            let out = Command::new(python)
                .arg(dir().join("run_mindspore.py"))
                .arg(&model)
                .arg("3")
                .args(&npys)
                .output()
                .expect("python runs");
            let stdout = ok("MindSpore", out);
            let ms = losses(stdout.lines().last().unwrap_or("[]"));
            assert!(
                close(&here, &ms),
                "{file}: mirdsl {here:?}, MindSpore {ms:?}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn cnn_with_momentum_exports_and_trains_the_same() {
    train_and_export(
        "cnn_momentum.mir",
        &[floats("x", &[2, 1, 8, 8], 1), classes("labels", 2, 10, 2)],
    );
}

#[test]
fn transformer_encoder_with_sgd_exports_and_trains_the_same() {
    train_and_export(
        "transformer_sgd.mir",
        &[floats("x", &[6, 2, 8], 3), classes("labels", 2, 4, 4)],
    );
}

/// `transformer_sgd.mir`'s batch `B` is symbolic and exports as a dynamic
/// dimension: the step trains the same at batch 3 as at batch 2 above.
#[test]
fn transformer_encoder_with_sgd_trains_the_same_at_batch_3() {
    train_and_export(
        "transformer_sgd.mir",
        &[floats("x", &[6, 3, 8], 9), classes("labels", 3, 4, 10)],
    );
}

/// The library's `lstm` recurses over the time steps: its gradient is a
/// recursive graph whose two branches return different backpropagators.
#[test]
fn lstm_with_adam_exports_and_trains_the_same() {
    train_and_export(
        "lstm_adam.mir",
        &[floats("xs", &[4, 2, 3], 11), classes("labels", 2, 4, 12)],
    );
}

/// An embedding, a GRU cell and `dense_act(Tanh, ...)`: a primitive passed as
/// a value.
#[test]
fn embedding_gru_cell_with_sgd_exports_and_trains_the_same() {
    let mut ids = classes("ids", 8, 10, 13);
    ids.value = ids.value.reshaped(vec![4, 2]).unwrap();
    train_and_export("embed_gru_sgd.mir", &[ids, classes("labels", 2, 3, 14)]);
}

#[test]
fn residual_block_with_adam_exports_and_trains_the_same() {
    train_and_export(
        "resnet_adam.mir",
        &[
            floats("x", &[2, 4, 4, 4], 5),
            classes("labels", 2, 3, 6),
            scalar("beta1_power", 0.9),
            scalar("beta2_power", 0.999),
        ],
    );
}

/// Held-out steps written as a new user would (issue 27's review): a CNN with
/// batch norm in training mode (its running statistics written back),
/// dropout, average pooling and Adam on every weight.
#[test]
fn cnn_with_batch_norm_and_adam_exports_and_trains_the_same() {
    train_and_export(
        "cnn_bn_adam.mir",
        &[floats("x", &[2, 3, 8, 8], 21), classes("labels", 2, 5, 22)],
    );
}

/// A GRU classifier whose loss reads only the last hidden state, SGD on
/// every weight: its gradient is the recursion over the time steps, unrolled
/// by export (MindSpore 2.10 does not compile a loaded loop's gradient).
#[test]
fn gru_classifier_with_sgd_exports_and_trains_the_same() {
    train_and_export(
        "gru_sgd.mir",
        &[
            floats("xs", &[5, 2, 3], 23),
            floats("h0", &[2, 4], 24),
            classes("labels", 2, 3, 25),
        ],
    );
}

/// Hand-written attention (`scores / Sqrt(8.0)`: a number folded and written
/// as a rank-0 tensor beside the scores), layer norm, GeLU and AdamW.
#[test]
fn transformer_block_with_adamw_exports_and_trains_the_same() {
    train_and_export(
        "transformer_adamw.mir",
        &[floats("x", &[2, 4, 8], 26), classes("labels", 2, 3, 27)],
    );
}

/// Slicing (`StridedSlice` with masks, `Slice`), `Tile` and `Concat` in a
/// step: their gradients (registry helpers) export as MindSpore primitives.
#[test]
fn slice_tile_concat_step_exports_and_trains_the_same() {
    train_and_export(
        "slice_concat_sgd.mir",
        &[floats("x", &[3, 6], 28), classes("labels", 3, 3, 29)],
    );
}

/// The GRU step over a symbolic sequence length: its gradient cannot be
/// unrolled, so export refuses it where the gradient is taken, naming the
/// graph and `--dim`; `--dim T=5` exports it (and MindSpore trains it as
/// with the length written out).
#[test]
fn gru_over_a_symbolic_length_needs_dim_to_export() {
    let scratch = std::env::temp_dir().join(format!("mirdsl-gru-symbolic-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let text = std::fs::read_to_string(dir().join("gru_sgd.mir"))
        .unwrap()
        .replace("f32[5, B, 3]", "f32[T, B, 3]");
    let source = scratch.join("gru_t.mir");
    std::fs::write(&source, &text).unwrap();
    let source = source.to_str().unwrap();
    ok("check", mirdsl(&["check", source]));
    let model = scratch.join("step.mindir");
    let model_s = model.to_str().unwrap();
    let refused = mirdsl(&["export", source, "--entry", "train_step", "-o", model_s]);
    assert_eq!(refused.status.code(), Some(1));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("the gradient of `loss` recurses")
            && err.contains("--dim")
            && err.contains("gru_t.mir:22:"),
        "{err}"
    );
    assert!(!model.exists());
    ok(
        "export --dim",
        mirdsl(&[
            "export",
            source,
            "--entry",
            "train_step",
            "--dim",
            "T=5",
            "-o",
            model_s,
        ]),
    );
    if let Some(python) = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    ) {
        let inputs = [
            floats("xs", &[5, 2, 3], 23),
            floats("h0", &[2, 4], 24),
            classes("labels", 2, 3, 25),
        ];
        let mut npys = Vec::new();
        let mut run = vec![
            "run".to_string(),
            dir().join("gru_sgd.mir").display().to_string(),
        ];
        run.extend(["--entry", "train_step", "--steps", "3", "--format", "json"].map(String::from));
        for input in &inputs {
            let path = scratch.join(format!("{}.npy", input.name));
            std::fs::write(&path, tensor::npy::write(&input.value)).unwrap();
            run.push("--arg".into());
            run.push(format!("{}={}", input.name, path.display()));
            npys.push(path.display().to_string());
        }
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        let here = losses(&ok("run", mirdsl(&run)));
        let out = Command::new(python)
            .arg(dir().join("run_mindspore.py"))
            .arg(&model)
            .arg("3")
            .args(&npys)
            .output()
            .expect("python runs");
        let ms = losses(ok("MindSpore", out).lines().last().unwrap_or("[]"));
        assert!(close(&here, &ms), "mirdsl {here:?}, MindSpore {ms:?}");
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The MLP step of `testdata/data_parallel` without its `AllReduce`s (they
/// need MindSpore's communication set up), as a baseline that exported before.
#[test]
fn mlp_with_momentum_exports_and_trains_the_same() {
    let step = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/data_parallel/step.mir"),
    )
    .unwrap();
    assert!(step.contains("AllReduce("));
    train_and_export(
        "mlp_momentum.mir",
        &[
            floats("x", &[4, 8], 7),
            floats("y", &[4, 4], 8),
            scalar("world_size", 1.0),
        ],
    );
}
