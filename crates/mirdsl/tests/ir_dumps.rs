//! MindSpore's compile dumps (`save_graphs`, `.ir`) from the command line:
//! a primitive mirdsl lacks imports as an `Opaque` node with MindSpore's
//! dumped type; `check`, `ir`, `dot` and `run` take a dump directly; `passes`
//! lists a dump folder as its pipeline. The dumps in testdata/irdumps are real
//! (MindSpore 2.10, CPU, testdata/irdumps/gen_dumps.py); the generator's whole
//! folders are measured by testdata/irdumps/measure.sh.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn mirdsl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mirdsl"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn dumps() -> PathBuf {
    repo().join("testdata/irdumps")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A kernel graph of the hardware-optimisation passes: `Load` then
/// `TensorMove` (a copy into memory of its own: `Identity`).
const KERNEL_GRAPH: &str = "kernel_graph_tensor_move.ir";

/// Real dumps (gen_dumps.py's `control_flow`, MindSpore 2.10): the bootstrap
/// stage's `resolve` (a Python name resolved later) and a `ReduceSum` whose
/// `keep_dims` an expanded `SumExt` computes at run time.
const BOOTSTRAP: &str = "bootstrap_resolve.ir";
const RUN_TIME_ATTR: &str = "expand_sum_run_time_attr.ir";

#[test]
fn an_unknown_primitive_imports_as_an_opaque_node_with_its_dumped_type() {
    let import = |file: &str| {
        let o = mirdsl()
            .arg("import")
            .arg(dumps().join(file))
            .output()
            .unwrap();
        let (out, err) = text(&o);
        assert!(o.status.success(), "{file}: {err}");
        out
    };
    let out = import(BOOTSTRAP);
    assert!(
        out.contains("%0 = Opaque(\"`NameSpace[Entry: '__main__.control_flow.<locals>.Step.construct']`\", \"the Python symbol `__main__.control_flow.<locals>.Step.construct`\", name=\"resolve\")  # dump_line: 17"),
        "{out}"
    );
    let out = import(RUN_TIME_ATTR);
    assert!(
        out.contains("expand._SumExt.reducesum: f32[] = Opaque(arg0, (), arg2, false, name=\"ReduceSum\")  # opaque_because: \"`keep_dims` is computed at run time\""),
        "{out}"
    );
    // `TensorMove` is a copy: the registry's `Identity`.
    let out = import(KERNEL_GRAPH);
    assert!(out.contains("= Identity(inner.dense.weight)"), "{out}");
}

#[test]
fn check_ir_and_dot_take_a_dump() {
    let dump = dumps().join(KERNEL_GRAPH);
    let o = mirdsl().arg("check").arg(&dump).output().unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    let o = mirdsl().arg("ir").arg(&dump).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("Identity"), "{out}");
    let o = mirdsl()
        .arg("ir")
        .arg(dumps().join(BOOTSTRAP))
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("Opaque"), "{out}");
    let o = mirdsl().arg("dot").arg(&dump).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.starts_with("digraph"), "{out}");
}

/// A dumped node's scope (`# Scope: (Default/inner-Loop)`, `# Fullname with
/// scope: (Default/.../Less-op0)`) stays in its imported name, as the
/// `.mindir` importer writes it: `inner.less`, whose scope is `inner`.
#[test]
fn imported_nodes_keep_their_scope() {
    let dump =
        dumps().join("stages/hwopt_common_eliminate_illegal_data_type_after_graph_2_0218.ir");
    let o = mirdsl().arg("ir").arg(&dump).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("  inner.less = Less(arg0, n)\n"), "{out}");
    let o = mirdsl().arg("dot").arg(&dump).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("inner.less : bool[]"), "{out}");
}

#[test]
fn run_stops_at_the_first_node_without_a_kernel_and_names_it() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ir_dumps_run");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("opaque.mir");
    std::fs::write(
        &file,
        "graph main(x: f32[2, 3]) {\n  y: f32[2, 3] = Opaque(x, 1, name=\"EnvironGet\")\n  return Add(y, x)\n}\n",
    )
    .unwrap();
    let o = mirdsl().arg("check").arg(&file).output().unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    let o = mirdsl()
        .arg("run")
        .arg(&file)
        .arg("--arg")
        .arg("x=ones")
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("no kernel for MindSpore primitive `EnvironGet` (imported as Opaque)")
            && err.contains("opaque.mir:2:"),
        "{err}"
    );
    // Run from the dump: the node's line in the dump is beside it.
    let o = mirdsl()
        .arg("run")
        .arg(dumps().join(BOOTSTRAP))
        .args(["--arg", "x=1.0", "--arg", "n=1.0"])
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("no kernel for MindSpore primitive `resolve` (imported as Opaque)")
            && err.contains("# dump_line: 17"),
        "{err}"
    );
    // Without its type an opaque node's value is unknown, and so is what uses it;
    // a required `name` is checked.
    std::fs::write(&file, "graph main(x: f32[2]) {\n  return Opaque(x)\n}\n").unwrap();
    let o = mirdsl().arg("check").arg(&file).output().unwrap();
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(err.contains("`Opaque` needs the attribute `name`"), "{err}");
}

/// What cannot import is an error at the dump's line of the node.
#[test]
fn an_import_error_names_the_dump_line() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ir_dumps_located");
    std::fs::create_dir_all(&dir).unwrap();
    let dump = dir.join("resolve.ir");
    std::fs::write(
        &dump,
        "# IR entry: @1_main_2\n\nsubgraph @1_main_2() {\n  %0(CNode_1) = resolve(NameSpace(ClassMember: 'Namespace:m'), f)\n  %1(CNode_2) = %0()\n  Return(%1)\n}\n",
    )
    .unwrap();
    let o = mirdsl().arg("import").arg(&dump).output().unwrap();
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("line 4: node `CNode_1` of graph `1_main_2`: `resolve`"),
        "{err}"
    );
}

#[test]
fn passes_lists_a_folder_in_pipeline_order() {
    let o = mirdsl()
        .arg("passes")
        .arg(dumps().join("stages"))
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let rows: Vec<&str> = out.lines().collect();
    assert!(
        rows[1]
            .ends_with("3       1  hwopt_common_eliminate_illegal_data_type_after_graph_2_0218.ir"),
        "{out}"
    );
    assert!(rows[2].trim() == "Less MakeTuple", "{out}");
    assert!(rows[3].ends_with("graph_12_0689.ir"), "{out}");
    assert_eq!(rows[4].trim(), "+ Add", "{out}");
    assert_eq!(rows[5].trim(), "- Less", "{out}");
    assert!(
        rows[6].contains("      4       1  ") && rows[6].ends_with("graph_19_1018.ir"),
        "{out}"
    );
    assert_eq!(rows[7].trim(), "+ Load TensorMove", "{out}");
    let o = mirdsl()
        .arg("passes")
        .arg(repo().join("crates"))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "a folder without dumps is a usage error"
    );
}

#[test]
fn diff_pairs_nodes_by_scope_and_structure_and_exits_as_diff_does() {
    let stages = dumps().join("stages");
    let less = stages.join("hwopt_common_eliminate_illegal_data_type_after_graph_2_0218.ir");
    let add = stages.join("hwopt_common_eliminate_illegal_data_type_after_graph_12_0689.ir");
    // A dump and itself: equal, nothing printed.
    let o = mirdsl().arg("diff").arg(&less).arg(&less).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(o.stdout.is_empty());
    // Two stages: the node of scope Default/inner-Loop changed its primitive,
    // its inputs and its type; the tuple and the output their types.
    let o = mirdsl().arg("diff").arg(&less).arg(&add).output().unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(out.contains("callee Less → Add"), "{out}");
    assert!(
        out.contains("type (<Tensor[Bool], ()>) → (<Tensor[Int32], ()>)"),
        "{out}"
    );
    assert!(out.ends_with("3 differences\n"), "{out}");
    // A dump against its own import (.ir against .mir): the import's
    // structure is the dump's, without the dump's scopes.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ir_dumps_diff");
    std::fs::create_dir_all(&dir).unwrap();
    let mir = dir.join("less.mir");
    let o = mirdsl()
        .arg("import")
        .arg(&less)
        .arg("-o")
        .arg(&mir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    let o = mirdsl().arg("diff").arg(&mir).arg(&mir).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    // A file that cannot be read: 2.
    let o = mirdsl()
        .arg("diff")
        .arg(dir.join("missing.ir"))
        .arg(&mir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// The execute graph of a real training step (a ResNet-style CNN,
/// `TrainOneStepCell` + `Momentum`, MindSpore 2.10 on CPU) run one step from
/// its dump and MindSpore's checkpoint before the step (`--load-weights`,
/// keyed by the dump's `ref_key` names) gives MindSpore's loss and, written
/// with `--save-weights`, MindSpore's checkpoint after the step: every trained
/// weight, every momentum accumulator, BatchNorm's moving statistics (which
/// the import updates as MindSpore's `BatchNorm` does in place) and
/// `global_step`. Optional: it compiles the step with MindSpore
/// (testdata/irdumps/gen_dumps.py, ~20 s).
#[test]
fn execute_graph_step_gives_mindspores_checkpoint_after_the_step() {
    // 26 weights, their 26 accumulators, 8 BatchNorms' moving mean and
    // variance, global_step, learning_rate, momentum.
    step_against_mindspore("resnet_momentum", "ir_dumps_step", &[], 71);
}

/// The same for the GPT-style language model trained with `AdamWeightDecay`
/// (gen_dumps.py's `gpt_adamw`). Its execute graph holds three tensor
/// constants MindSpore prints only in part (`value=[...]`: the two blocks'
/// causal masks, f32[8, 8], and the loss's `ones` weights, f32[16, 1]), which
/// it prints in full nowhere: `run` refuses without them, naming each and
/// its line, and they are given, as the network defines them, with a second
/// `--load-weights`. Then the step gives MindSpore's loss and every weight,
/// Adam moment and `global_step` after it.
#[test]
fn gpt_adamw_execute_graph_step_gives_mindspores_checkpoint() {
    // 2 blocks' 12 parameters, embeddings, final LayerNorm and head (30
    // parameters), their 30 first and 30 second moments, global_step and
    // the schedule's scalars.
    step_against_mindspore(
        "gpt_adamw",
        "ir_dumps_gpt_step",
        &[
            (
                "network.network.add.constant1",
                "np.triu(np.full((8, 8), -1e9, np.float32), 1)",
            ),
            (
                "network.network.add.constant1_2",
                "np.triu(np.full((8, 8), -1e9, np.float32), 1)",
            ),
            (
                "network.ce.maskedfill.constant0",
                "np.ones((16, 1), np.float32)",
            ),
        ],
        92,
    );
}

/// Generates `net` with gen_dumps.py under the test's folder `tmp`, runs its
/// execute graph one step from MindSpore's checkpoint before it (and the
/// `constants`, NAME and a NumPy expression of its value, as a folder of
/// NAME.npy), and compares the loss and the checkpoint it writes with
/// MindSpore's (`count` parameters). Optional: it needs MindSpore.
fn step_against_mindspore(net: &str, tmp: &str, constants: &[(&str, &str)], count: usize) {
    let Some(python) = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    ) else {
        return;
    };
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(tmp);
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let o = Command::new(&python)
        .arg(dumps().join("gen_dumps.py"))
        .arg(net)
        .arg("--out")
        .arg(&root)
        .output()
        .unwrap();
    assert!(o.status.success(), "gen_dumps.py: {:?}", text(&o));
    let dir = root.join(net);
    let execute = std::fs::read_dir(dir.join("ir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.contains("_execute_")
                && n.ends_with(".ir")
                && n.starts_with(|c: char| c.is_ascii_digit())
        })
        .expect("an execute-stage dump");
    let mine = dir.join("mirdsl_after.ckpt");
    let run = |extra: &[PathBuf]| {
        let mut c = mirdsl();
        c.arg("run")
            .arg(&execute)
            .arg("--load-weights")
            .arg(dir.join("weights_before.ckpt"));
        for e in extra {
            c.arg("--load-weights").arg(e);
        }
        c.arg("--arg")
            .arg(format!("0={}", dir.join("in0.npy").display()))
            .arg("--arg")
            .arg(format!("1={}", dir.join("in1.npy").display()))
            .arg("--save-weights")
            .arg(&mine)
            .arg("--format")
            .arg("json")
            .output()
            .unwrap()
    };
    let mut extra = Vec::new();
    if !constants.is_empty() {
        // Without the constants: refused, each named with its line.
        let o = run(&[]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        for (name, _) in constants {
            assert!(
                err.contains(&format!(
                    "imported as the weight `{name}`: the dump does not hold its value"
                )),
                "{err}"
            );
        }
        let folder = dir.join("constants");
        std::fs::create_dir_all(&folder).unwrap();
        let mut script = String::from("import numpy as np\n");
        for (name, value) in constants {
            script.push_str(&format!(
                "np.save({:?}, {value})\n",
                folder.join(format!("{name}.npy")).display().to_string()
            ));
        }
        let o = Command::new(&python)
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        assert!(o.status.success(), "{:?}", text(&o));
        extra.push(folder);
    }
    let o = run(&extra);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let loss: f64 = serde_json::from_str::<serde_json::Value>(out.trim())
        .ok()
        .and_then(|v| v.get("data").cloned().or(Some(v)))
        .and_then(|v| match v {
            serde_json::Value::Number(n) => n.as_f64(),
            serde_json::Value::Array(a) => a.first().and_then(|x| x.as_f64()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("a loss in {out}"));
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("loss.json")).unwrap()).unwrap();
    let want = want["loss"].as_f64().unwrap();
    assert!(
        (loss - want).abs() <= 1e-5 * want.abs(),
        "loss {loss}, MindSpore's {want}"
    );
    let o = Command::new(&python)
        .arg(dumps().join("compare_step.py"))
        .arg(&mine)
        .arg(dir.join("weights_after.ckpt"))
        .arg(dir.join("weights_before.ckpt"))
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "compare_step.py: {out}{err}");
    let mut compared = 0;
    for line in out.lines() {
        let mut parts = line.split_whitespace();
        let (Some(rel), Some(name)) = (parts.next(), parts.next()) else {
            continue;
        };
        let rel: f64 = rel.parse().unwrap();
        assert!(
            rel <= 1e-4,
            "{name} differs from MindSpore's by {rel:e} (relative)\n{out}"
        );
        compared += 1;
    }
    assert_eq!(compared, count, "{out}");
    let _ = std::fs::remove_dir_all(&root);
}

/// The same on a checked-in dump (testdata/irdumps/step: the execute graph of
/// gen_dumps.py's `tiny_step`, a conv-ReLU-Dense training step with
/// `Momentum`, MindSpore 2.10 on CPU, with MindSpore's checkpoints before
/// and after the step and its loss): one step gives MindSpore's loss, and
/// every parameter in the checkpoint it writes is MindSpore's after the step.
#[test]
fn checked_in_execute_graph_step_gives_mindspores_checkpoint() {
    let dir = dumps().join("step");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ir_dumps_tiny_step.ckpt");
    let o = mirdsl()
        .arg("run")
        .arg(dir.join("24_execute.ir"))
        .arg("--load-weights")
        .arg(dir.join("weights_before.ckpt"))
        .arg("--arg")
        .arg(format!("0={}", dir.join("in0.npy").display()))
        .arg("--arg")
        .arg(format!("1={}", dir.join("in1.npy").display()))
        .arg("--save-weights")
        .arg(&out)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let got: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let loss = got["data"][0].as_f64().unwrap();
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("loss.json")).unwrap()).unwrap();
    let want = want["loss"].as_f64().unwrap();
    assert!(
        (loss - want).abs() <= 1e-6 * want.abs(),
        "loss {loss}, MindSpore's {want}"
    );
    let mine = tensor::named::NamedTensors::open(&out).unwrap();
    let theirs = tensor::named::NamedTensors::open(&dir.join("weights_after.ckpt")).unwrap();
    let before = tensor::named::NamedTensors::open(&dir.join("weights_before.ckpt")).unwrap();
    let mut names = theirs.names();
    names.sort();
    let mut mine_names = mine.names();
    mine_names.sort();
    assert_eq!(mine_names, names, "the same parameters");
    let mut updated = 0;
    for name in &names {
        let (a, b) = (mine.read(name).unwrap(), theirs.read(name).unwrap());
        assert_eq!(a.shape(), b.shape(), "{name}");
        let (a, b) = (a.to_f64_vec(), b.to_f64_vec());
        let scale = b.iter().fold(1e-12f64, |m, x| m.max(x.abs()));
        let worst = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(worst <= 1e-5 * scale, "{name}: {a:?} vs MindSpore's {b:?}");
        if before.read(name).unwrap().to_f64_vec() != b {
            updated += 1;
        }
    }
    // conv.weight, fc.weight, fc.bias, their accumulators and global_step.
    assert_eq!(updated, 7, "{names:?}");
}

/// A loop-lift dump (testdata/irdumps/loop_lift: gen_dumps.py's
/// `control_flow`, `after_lift_*`, MindSpore 2.10 on CPU): MindSpore prints the
/// loop's graph nested in its caller, which it is still building (printed
/// empty, no `Return`). The import leaves that graph out and says so; the
/// caller's parameters the loop captures are the weights they are, and the
/// dump runs to MindSpore's result with MindSpore's checkpoint.
#[test]
fn a_loop_lift_dump_imports_and_runs() {
    let dir = dumps().join("loop_lift");
    let dump = dir.join("after_lift.ir");
    let o = mirdsl().arg("import").arg(&dump).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains(
            "# `@1___main___control_flow__locals__Step_construct_87` (line 399) is left out: \
             MindSpore printed it empty, while building it; its parameters the other graphs use \
             are weights (inner.dense.weight, inner.dense.bias)."
        ),
        "{out}"
    );
    assert!(out.contains("param inner.dense.weight: f32[4, 4]"), "{out}");
    let o = mirdsl()
        .arg("run")
        .arg(&dump)
        .arg("--load-weights")
        .arg(dir.join("weights_before.ckpt"))
        .arg("--arg")
        .arg(format!("0={}", dir.join("in0.npy").display()))
        .arg("--arg")
        .arg(format!("1={}", dir.join("in1.npy").display()))
        .args(["--format", "json"])
        .output()
        .unwrap();
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let got: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let got = got["data"]
        .as_f64()
        .or_else(|| got["data"][0].as_f64())
        .unwrap_or_else(|| panic!("{stdout}"));
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("loss.json")).unwrap()).unwrap();
    let want = want["loss"].as_f64().unwrap();
    assert!(
        (got - want).abs() <= 1e-6 * want.abs(),
        "{got}, MindSpore's {want}"
    );
}

/// MindSpore's runtime actor sets (testdata/irdumps/actors: gen_dumps.py's
/// `tiny_step`, MindSpore 2.10 on CPU), in both forms, import as the data
/// flow between the actors: the data source's nodes and the weights are the
/// graph's inputs, each kernel an `Opaque` node of its primitive fed by the
/// actors the set names (the final form with its printed types), the output
/// actor's input the result, control-only actors comments. Both check.
#[test]
fn actor_sets_import_as_the_data_flow_between_actors() {
    let dir = dumps().join("actors");
    let cases = [
        (
            "0_actor_set_pipeline_kernel_graph_0.ir",
            "%9 = Opaque(%6, inputs1, name=\"SoftmaxCrossEntropyWithLogits\")  # actor \
             7_Default/network-WithLossCell/_loss_fn-SoftmaxCrossEntropyWithLogits/\
             SoftmaxCrossEntropyWithLogits-op0 (kernel)",
            "%18 = Opaque(%17, inputs0, \"Tensor(shape=[4], dtype=Int64, value=[2 1 3 3])\", \
             name=\"Conv2DBackpropFilter\")",
        ),
        (
            "final_actor_set_kernel_graph_0.ir",
            "%7: (f32[2], f32[2, 3]) = Opaque(%6, inputs1, name=\"SoftmaxCrossEntropyWithLogits\")",
            "%22: f32[2, 1, 3, 3] = Opaque(conv_weight, moments_conv_weight, learning_rate, %18[2], \
             momentum, name=\"ApplyMomentum\")",
        ),
    ];
    for (file, a, b) in cases {
        let out_file = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{file}.mir"));
        let o = mirdsl()
            .arg("import")
            .arg(dir.join(file))
            .arg("-o")
            .arg(&out_file)
            .output()
            .unwrap();
        assert!(o.status.success(), "{file}: {:?}", text(&o));
        let out = std::fs::read_to_string(&out_file).unwrap();
        assert!(out.contains(a), "{file}: {out}");
        assert!(out.contains(b), "{file}: {out}");
        assert!(
            out.contains("# actor kernel_graph_0_LoopCountActor (loop count): control only"),
            "{out}"
        );
        assert!(
            out.contains("  # actor kernel_graph_0_OutputActor (output)\n  return %"),
            "{out}"
        );
        let o = mirdsl().arg("check").arg(&out_file).output().unwrap();
        assert!(o.status.success(), "{file}: {:?}", text(&o));
    }
}

/// `mirdsl diff --format json`: the same differences as one object, with
/// the same exit codes (0 equal, 1 different).
#[test]
fn diff_as_json() {
    let stages = dumps().join("stages");
    let less = stages.join("hwopt_common_eliminate_illegal_data_type_after_graph_2_0218.ir");
    let add = stages.join("hwopt_common_eliminate_illegal_data_type_after_graph_12_0689.ir");
    let o = mirdsl()
        .args(["diff", "--format", "json"])
        .arg(&less)
        .arg(&less)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["equal"], true);
    assert_eq!(v["changes"].as_array().unwrap().len(), 0);
    let o = mirdsl()
        .args(["diff", "--format", "json"])
        .arg(&less)
        .arg(&add)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{:?}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["equal"], false);
    let changes = v["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 3, "{v}");
    let changed = changes
        .iter()
        .find(|c| {
            c["kind"] == "node_changed" && c["what"].to_string().contains("callee Less → Add")
        })
        .unwrap_or_else(|| panic!("{v}"));
    assert!(changed["graph"].as_str().is_some(), "{v}");
}
