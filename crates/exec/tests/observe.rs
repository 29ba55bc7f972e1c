//! The observer hook a debugger uses (`Executor::set_observer`): it sees
//! every statement of every graph call with the frame's values, and a run
//! with one gives the same bits as a run without (which may use compiled
//! plans).

use std::sync::{Arc, Mutex};

use exec::{ExecOptions, Executor, Frames, Observer, RunError, Value};
use tensor::Tensor;

const SRC: &str = r#"
param fc.weight: f32[4, 3] = normal(std=0.5, seed=3)
param fc.bias: f32[4] = normal(std=0.1, seed=4)

graph layer(x: f32[B, 3]) -> f32[B, 4] {
  h = BiasAdd(MatMul(x, fc.weight, transpose_b=true), fc.bias)
  return Tanh(h)
}

graph loss(x: f32[B, 3], labels: i32[B]) -> f32[] {
  logits = layer(x)
  s = Softmax(logits, axis=-1)
  return SparseSoftmaxCrossEntropyWithLogits(logits * 2.0 + ReduceSum(s), labels)
}

graph main(x: f32[B, 3], labels: i32[B]) {
  l = loss(x, labels)
  g = value_and_grad(loss, wrt=(fc.weight, fc.bias))(x, labels)
  return (l, g)
}
"#;

fn executor() -> Executor {
    let a = analysis::analyze(SRC);
    assert!(!a
        .diagnostics
        .iter()
        .any(|d| d.severity == analysis::Severity::Error));
    Executor::new(&a.source.program(), ExecOptions::default())
}

fn args() -> Vec<Value> {
    let x: Vec<f32> = (0..15).map(|i| (i as f32 * 0.37).sin()).collect();
    vec![
        Value::tensor(Tensor::from_f32(vec![5, 3], x).unwrap()),
        Value::tensor(Tensor::from_i64(tensor::DType::I32, vec![5], vec![0, 3, 1, 2, 3]).unwrap()),
    ]
}

fn bits(v: &Value) -> Vec<u64> {
    match v {
        Value::Tuple(items) => items.iter().flat_map(bits).collect(),
        _ => v
            .as_tensor()
            .expect("a tensor")
            .tensor()
            .to_f64_vec()
            .iter()
            .map(|x| x.to_bits())
            .collect(),
    }
}

/// Records each statement seen: the innermost graph and how many named
/// values its frame held then.
struct Recorder(Arc<Mutex<Vec<(String, usize)>>>);

impl Observer for Recorder {
    fn before(&mut self, frames: &Frames<'_>) -> Result<(), RunError> {
        let f = frames.frame(0).expect("a frame");
        let named = f
            .values()
            .iter()
            .filter(|(n, _)| f.body().node(*n).name.is_some())
            .count();
        self.0.lock().unwrap().push((f.name().to_string(), named));
        Ok(())
    }
    fn after(&mut self, _: &Frames<'_>, _: &[u32]) -> Result<(), RunError> {
        Ok(())
    }
}

#[test]
fn an_observed_run_gives_the_same_bits_and_sees_every_graph() {
    let plain = executor().call("main", args()).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut ex = executor();
    ex.set_observer(Some(Box::new(Recorder(seen.clone()))));
    let observed = ex.call("main", args()).unwrap();
    assert_eq!(bits(&plain), bits(&observed));
    let seen = seen.lock().unwrap();
    for g in ["main", "loss", "layer", "value_and_grad_loss"] {
        assert!(seen.iter().any(|(n, _)| n == g), "{g} not seen: {seen:?}");
    }
    // Values stay while their frame runs: `loss` holds x, labels, logits and s by its return.
    let most = seen.iter().filter(|(n, _)| n == "loss").map(|s| s.1).max();
    assert!(most >= Some(4), "{seen:?}");
}

#[test]
fn an_observer_error_ends_the_run() {
    struct Stop;
    impl Observer for Stop {
        fn before(&mut self, _: &Frames<'_>) -> Result<(), RunError> {
            Err(RunError::new(
                exec::ErrorKind::Interrupted,
                "stopped by the observer",
            ))
        }
        fn after(&mut self, _: &Frames<'_>, _: &[u32]) -> Result<(), RunError> {
            Ok(())
        }
    }
    let mut ex = executor();
    ex.set_observer(Some(Box::new(Stop)));
    let e = ex.call("main", args()).unwrap_err();
    assert_eq!(e.kind, exec::ErrorKind::Interrupted);
    assert_eq!(ex.memory().current_bytes, 0, "the run's tensors are freed");
}
