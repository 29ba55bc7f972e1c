//! The gradients of the 3-D convolutions and poolings and of the poolings
//! with argmax, which emit MindSpore's backward primitives as its bprops do
//! (`Conv3DBackpropInput`, `Conv3DBackpropFilter`, `AvgPool3DGrad`,
//! `MaxPool3DGrad`, `MaxPool3DGradWithArgmax`, `MaxPoolGradWithArgmax`,
//! `MaxPoolGradWithArgmaxV2`, `AdaptiveMaxPool2DGrad`): export writes them,
//! and their forwards, with the attributes MindSpore stores (5-tuple
//! strides, 6-int `pad_list`s, `format`, upper-case pooling modes), and
//! MindSpore 2.10 runs them; so do the backward primitives' own gradients.

use super::{export_and_run_the_same, Case};
use crate::floats;

#[test]
fn gradients_of_3d_convolutions_and_pools_export_and_run_the_same() {
    let x5 = || floats("x", &[1, 2, 5, 5, 5], 51);
    let cases = vec![
        // Differentiating the input, then the weight (the first input).
        Case::new(
            "Conv3D(x, w, out_channel=3, kernel_size=2, stride=2, pad_mode=\"pad\", pad=1)",
            vec![x5(), floats("w", &[3, 2, 2, 2, 2], 52)],
        ),
        Case::new(
            "Conv3D(x, w, out_channel=3, kernel_size=(2, 2, 2), stride=(1, 2, 2), pad_mode=\"same\")",
            vec![floats("w", &[3, 2, 2, 2, 2], 53), x5()],
        ),
        Case::new(
            "Conv3D(x, w, out_channel=4, kernel_size=(2, 1, 2), dilation=(2, 1, 1), group=2)",
            vec![floats("x", &[1, 2, 5, 4, 4], 54), floats("w", &[4, 1, 2, 1, 2], 55)],
        ),
        Case::new(
            "Conv3DTranspose(x, w, in_channel=2, out_channel=3, kernel_size=2, stride=2, \
             pad_mode=\"pad\", pad=(1, 0, 0, 1, 1, 1), output_padding=(1, 0, 1))",
            vec![floats("x", &[1, 2, 3, 3, 3], 56), floats("w", &[2, 3, 2, 2, 2], 57)],
        ),
        Case::new(
            "Conv3DTranspose(x, w, in_channel=2, out_channel=4, kernel_size=(3, 2, 2), stride=2, \
             pad_mode=\"same\", group=2)",
            vec![floats("w", &[2, 2, 3, 2, 2], 58), floats("x", &[1, 2, 3, 3, 2], 59)],
        ),
        Case::new(
            "AvgPool3D(x, kernel_size=2, strides=2, pad_mode=\"pad\", pad=1, count_include_pad=false)",
            vec![x5()],
        ),
        Case::new(
            "AvgPool3D(x, kernel_size=(2, 3, 2), strides=2, pad_mode=\"same\")",
            vec![x5()],
        ),
        Case::new(
            "AvgPool3D(x, kernel_size=(2, 3, 2), strides=(1, 2, 2), pad_mode=\"pad\", \
             pad=(1, 0, 1, 1, 0, 1), ceil_mode=true, divisor_override=3)",
            vec![floats("x", &[1, 2, 4, 5, 5], 60)],
        ),
        Case::new("MaxPool3D(x, kernel_size=2, strides=2)", vec![x5()]),
        Case::new(
            "MaxPool3D(x, kernel_size=2, strides=2, pad_mode=\"PAD\", pad_list=1, ceil_mode=true)",
            vec![x5()],
        ),
        Case::new(
            "MaxPool3D(x, kernel_size=(2, 3, 2), strides=2, pad_mode=\"SAME\")",
            vec![floats("x", &[1, 2, 5, 5, 4], 61)],
        ),
        Case::new(
            "MaxPool3DWithArgmax(x, ksize=(2, 3, 2), strides=(1, 2, 2), pads=(0, 1, 1), \
             dilation=(1, 1, 2))[0]",
            vec![floats("x", &[1, 2, 4, 6, 6], 62)],
        ),
        Case::new(
            "MaxPoolWithArgmaxV2(x, kernel_size=(3, 2), strides=(2, 1), pads=(1, 0), \
             dilation=(1, 2), ceil_mode=true)[0]",
            vec![floats("x", &[2, 2, 7, 6], 63)],
        ),
        Case::new(
            "MaxPoolWithArgmax(x, kernel_size=2, strides=2)[0]",
            vec![floats("x", &[2, 3, 6, 5], 72)],
        ),
        Case::new(
            "MaxPoolWithArgmax(x, kernel_size=(3, 2), strides=(2, 1), pad_mode=\"same\")[0]",
            vec![floats("x", &[2, 3, 5, 6], 73)],
        ),
        Case::new(
            "AdaptiveMaxPool2D(x, output_size=(3, 2))[0]",
            vec![floats("x", &[1, 2, 6, 6], 64)],
        ),
        // The backward primitives' own gradients (second order), each
        // differentiated in its first input: the max pools' pick the
        // sensitivity at the maxima (`_PoolArgmaxGather`, `_MaxPool3DArgmax`,
        // written with GatherD and MaxPool3DWithArgmax).
        Case::new(
            "Conv3DBackpropInput(w, d, (1, 2, 5, 5, 5), out_channel=3, kernel_size=2, stride=2, \
             pad_mode=\"pad\", pad=1)",
            vec![floats("w", &[3, 2, 2, 2, 2], 65), floats("d", &[1, 3, 3, 3, 3], 66)],
        ),
        Case::new(
            "Conv3DBackpropFilter(x, d, (3, 2, 2, 2, 2), out_channel=3, kernel_size=2, stride=2, \
             pad_mode=\"pad\", pad=1)",
            vec![x5(), floats("d", &[1, 3, 3, 3, 3], 67)],
        ),
        Case::new(
            "AvgPool3DGrad((1, 2, 5, 5, 5), d, kernel_size=2, strides=2, pads=1, \
             count_include_pad=false)",
            vec![floats("d", &[1, 2, 3, 3, 3], 68)],
        ),
        Case::new(
            "MaxPool3DGrad(x, MaxPool3D(x, kernel_size=2, strides=2, pad_mode=\"PAD\", pad_list=1), \
             d, kernel_size=2, strides=2, pad_mode=\"PAD\", pad_list=1)",
            vec![floats("d", &[1, 2, 3, 3, 3], 69), x5()],
        ),
        // MaxPool3D's maxima with uneven padding: found in the input padded
        // with the lowest float.
        Case::new(
            "MaxPool3DGrad(x, MaxPool3D(x, kernel_size=(2, 3, 2), strides=2, pad_mode=\"SAME\"), \
             d, kernel_size=(2, 3, 2), strides=2, pad_mode=\"SAME\")",
            vec![floats("d", &[1, 2, 3, 3, 2], 76), floats("x", &[1, 2, 5, 5, 4], 77)],
        ),
        Case::new(
            "MaxPool3DGrad(x, MaxPool3D(x, kernel_size=2, strides=2, pad_mode=\"PAD\", \
             pad_list=(1, 0, 0, 1, 1, 1)), d, kernel_size=2, strides=2, pad_mode=\"PAD\", \
             pad_list=(1, 0, 0, 1, 1, 1))",
            vec![floats("d", &[1, 2, 3, 3, 3], 78), x5()],
        ),
        Case::new(
            "MaxPoolGradWithArgmax(x, d, MaxPoolWithArgmax(x, kernel_size=2, strides=2)[1], \
             kernel_size=2, strides=2)",
            vec![floats("d", &[2, 3, 3, 2], 74), floats("x", &[2, 3, 6, 5], 75)],
        ),
        Case::new(
            "MaxPoolGradWithArgmaxV2(x, d, MaxPoolWithArgmaxV2(x, kernel_size=3, strides=2, \
             pads=1)[1], kernel_size=3, strides=2, pads=1)",
            vec![floats("d", &[1, 2, 3, 3], 70), floats("x", &[1, 2, 6, 6], 71)],
        ),
    ];
    export_and_run_the_same("conv_pool", &cases);
}

/// MindSpore's own gradients of these operations (its bprops' backward
/// primitives, with the attributes it stores, as
/// `testdata/training/ms_conv_pool_grads.py` exports them) import and run
/// here to MindSpore's value and gradients. Needs MindSpore.
#[test]
fn mindspore_exported_gradients_import_and_run_the_same() {
    let Some(python) = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    ) else {
        return;
    };
    let scratch = std::env::temp_dir().join(format!("mirdsl-ms-conv-pool-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let out = std::process::Command::new(python)
        .arg(crate::dir().join("ms_conv_pool_grads.py"))
        .arg(&scratch)
        .output()
        .expect("python runs");
    let text = crate::ok("MindSpore's exports", out);
    let want: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(text.lines().last().unwrap_or("{}")).unwrap();
    assert!(want.len() >= 9, "{want:?}");
    for (name, numbers) in &want {
        let want: Vec<f64> = numbers
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_f64().unwrap())
            .collect();
        let model = scratch.join(format!("{name}.mindir"));
        let imported = scratch.join(format!("{name}.mir"));
        let (model, imported) = (model.to_str().unwrap(), imported.to_str().unwrap());
        crate::ok(
            &format!("import of MindSpore's {name}"),
            crate::mirdsl(&["import", model, "-o", imported]),
        );
        // The entry's parameters, named as MindSpore's cell's (`args0`, ...).
        let text = std::fs::read_to_string(imported).unwrap();
        let params = text
            .lines()
            .find_map(|l| l.strip_prefix("graph main("))
            .and_then(|l| l.split_once(')'))
            .map(|(params, _)| params.to_string())
            .unwrap();
        let names: Vec<&str> = params
            .split(", ")
            .filter_map(|p| p.split_once(':').map(|(n, _)| n.trim()))
            .filter(|n| !n.contains(']'))
            .collect();
        let args: Vec<String> = names
            .iter()
            .enumerate()
            .map(|(k, n)| format!("{n}={}", scratch.join(format!("{name}-{k}.npy")).display()))
            .collect();
        let mut argv = vec!["run", imported, "--entry", "main", "--format", "json"];
        for a in &args {
            argv.extend(["--arg", a.as_str()]);
        }
        let v: serde_json::Value = serde_json::from_str(&crate::ok(
            &format!("run of MindSpore's {name}"),
            crate::mirdsl(&argv),
        ))
        .unwrap();
        let mut got = Vec::new();
        crate::numbers(&v, &mut got);
        assert!(
            crate::close(&got, &want),
            "{name}: mirdsl {got:?}, MindSpore {want:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// A batch left symbolic (`B`) exports once: the gradients' shapes come from
/// `Shape(x)` at run time and the "same" paddings from the known spatial
/// sizes, so the one model runs batches of 2 and 3, imported back and (with
/// MindSpore) in MindSpore, to mirdsl's numbers.
#[test]
fn a_symbolic_batch_exports_once_for_every_batch_size() {
    let scratch = std::env::temp_dir().join(format!("mirdsl-conv-pool-b-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let python = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    );
    let source = scratch.join("step.mir");
    std::fs::write(
        &source,
        "graph f(x: f32[B, 2, 5, 5, 5], w: f32[3, 2, 2, 2, 2]) -> f32[] {\n  \
         %y = Conv3D(x, w, out_channel=3, kernel_size=2, stride=2, pad_mode=\"pad\", pad=1)\n  \
         %z = AvgPool3D(%y, kernel_size=2, strides=1, pad_mode=\"same\")\n  \
         %m = MaxPool3D(%z, kernel_size=2, strides=1, pad_mode=\"SAME\")\n  \
         return ReduceSum(Sin(%m))\n}\n\
         graph main(x: f32[B, 2, 5, 5, 5], w: f32[3, 2, 2, 2, 2]) {\n  \
         return value_and_grad(f, wrt=(0, 1))(x, w)\n}\n",
    )
    .unwrap();
    let model = scratch.join("step.mindir");
    let imported = scratch.join("imported.mir");
    let (source, model, imported) = (
        source.to_str().unwrap(),
        model.to_str().unwrap(),
        imported.to_str().unwrap(),
    );
    crate::ok("export", crate::mirdsl(&["export", source, "-o", model]));
    crate::ok("import", crate::mirdsl(&["import", model, "-o", imported]));
    let w = scratch.join("w.npy");
    std::fs::write(
        &w,
        tensor::npy::write(&floats("w", &[3, 2, 2, 2, 2], 81).value),
    )
    .unwrap();
    for batch in [2, 3] {
        let x = scratch.join(format!("x{batch}.npy"));
        let value = floats("x", &[batch, 2, 5, 5, 5], 80 + batch as u64).value;
        std::fs::write(&x, tensor::npy::write(&value)).unwrap();
        let (xa, wa) = (format!("x={}", x.display()), format!("w={}", w.display()));
        let run = |file: &str| {
            let argv = [
                "run", file, "--entry", "main", "--format", "json", "--arg", &xa, "--arg", &wa,
            ];
            let v: serde_json::Value =
                serde_json::from_str(&crate::ok("run", crate::mirdsl(&argv))).unwrap();
            let mut out = Vec::new();
            crate::numbers(&v, &mut out);
            out
        };
        let want = run(source);
        let back = run(imported);
        assert!(
            crate::close(&back, &want),
            "batch {batch}: imported {back:?}, mirdsl {want:?}"
        );
        let Some(python) = &python else { continue };
        let out = std::process::Command::new(python)
            .arg(crate::dir().join("run_mindspore.py"))
            .args([model, "1"])
            .args([&x, &w])
            .output()
            .expect("python runs");
        let v: serde_json::Value =
            serde_json::from_str(crate::ok("MindSpore", out).lines().last().unwrap_or("[]"))
                .unwrap();
        let mut got = Vec::new();
        crate::numbers(&v, &mut got);
        assert!(
            crate::close(&got, &want),
            "batch {batch}: MindSpore {got:?}, mirdsl {want:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
