//! What every generated program must satisfy.
//!
//! 1. It checks, and inference and execution agree on the types of the
//!    entry's result (and of its gradient's).
//! 2. First order: `grad(f, wrt=every parameter)` matches f64 central finite
//!    differences of `f`; with and without the clean-up passes the gradients
//!    are the same numbers; the printed gradient program (`mirdsl grad`)
//!    parses, checks and runs to them too.
//! 3. Second order: a graph `g2` that calls `grad(f)` (and projects the
//!    gradients) is differentiated the same way, against finite differences
//!    of `g2` (whose inner gradient the executor takes at run time).
//! 4. Transforms (spec §7): `vmap(f)` over a batch of 3 examples of every
//!    parameter equals `f` applied to each example, stacked; for a scalar
//!    `f`, `jacrev(f, wrt=every parameter)` and `jacfwd(...)` equal its
//!    gradient (checked against finite differences in 2).

use std::collections::HashMap;

use ir::{AbsVal, DType, GraphId, MetaFn, Program as IrProgram, WrtItem};
use tensor::Tensor;

use crate::gen::{random_value, Program, ENTRY};

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The generated program does not check.
    Check,
    /// It checks but fails to run (or its gradient does).
    Run,
    /// Inference and execution disagree on a type.
    Types,
    /// The transformation refused it.
    Differentiate,
    /// The printed gradient program does not check.
    PrintedCheck,
    /// The printed gradient program runs to other numbers.
    PrintedValue,
    /// The clean-up passes changed a value.
    CleanUp,
    /// A gradient disagrees with finite differences.
    FiniteDifferences,
    /// `vmap(f)(xs)` differs from `f` applied to each example, stacked.
    Vmap,
    /// `jacrev(f)` or `jacfwd(f)` of a scalar `f` differs from its gradient.
    Jacobian,
}

#[derive(Debug, Clone)]
pub struct Failure {
    pub kind: Kind,
    /// The order of differentiation (1 or 2) where it happened.
    pub order: usize,
    pub message: String,
}

/// What a run of checks counted.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    pub programs: usize,
    /// Programs whose values left the range finite differences can judge
    /// (non-finite or huge): not checked further.
    pub discarded: usize,
    pub checked: usize,
    /// Gradient elements compared with finite differences, per order.
    pub first_order: usize,
    pub second_order: usize,
    pub failures: usize,
}

pub enum Outcome {
    Passed { first: usize, second: usize },
    Discarded(String),
    Failed(Failure),
}

fn fail(kind: Kind, order: usize, message: impl Into<String>) -> Outcome {
    Outcome::Failed(Failure {
        kind,
        order,
        message: message.into(),
    })
}

macro_rules! tryo {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(o) => return o,
        }
    };
}

/// Checks a program at a few points (a disagreement with finite
/// differences at one point may be a kink; it must hold at all of them).
pub fn check(p: &Program) -> Outcome {
    let text = p.text();
    let mut last = None;
    for attempt in 0..3u64 {
        let seed = p.seed.wrapping_mul(31).wrapping_add(attempt);
        match check_at(p, &text, seed) {
            Outcome::Failed(f) if f.kind == Kind::FiniteDifferences => last = Some(f),
            other => return other,
        }
    }
    Outcome::Failed(last.expect("a failure"))
}

fn analyze(text: &str) -> Result<analysis::FileAnalysis, String> {
    let a = analysis::analyze(text);
    let errors: Vec<String> = a
        .diagnostics
        .iter()
        .filter(|d| d.severity == analysis::Severity::Error)
        .map(|d| {
            format!(
                "{:?}: {} at `{}`",
                d.code,
                d.message,
                text.get(usize::from(d.range.start())..usize::from(d.range.end()))
                    .unwrap_or("?")
            )
        })
        .collect();
    if errors.is_empty() {
        Ok(a)
    } else {
        Err(errors.join("\n"))
    }
}

fn executor(program: &IrProgram) -> exec::Executor {
    exec::Executor::new(program, exec::ExecOptions::default())
}

fn call(ex: &mut exec::Executor, entry: &str, args: &[Tensor]) -> Result<exec::Value, String> {
    let args: Vec<exec::Value> = args.iter().map(|t| ex.tensor(t.clone())).collect();
    ex.call(entry, args).map_err(|e| format!("{e:?}"))
}

/// Tensors of a value, depth first (`None` for non-tensors).
fn leaves(v: &exec::Value, out: &mut Vec<Option<Tensor>>) {
    match v {
        exec::Value::Tensor(t) => out.push(Some(t.tensor().clone())),
        exec::Value::Tuple(items) => items.iter().for_each(|i| leaves(i, out)),
        _ => out.push(None),
    }
}

fn flat(v: &exec::Value) -> Vec<Vec<f64>> {
    let mut out = Vec::new();
    leaves(v, &mut out);
    out.into_iter()
        .map(|t| t.map(|t| t.to_f64_vec()).unwrap_or_default())
        .collect()
}

/// The sum of every float element (what `grad` differentiates).
fn total(v: &exec::Value) -> f64 {
    let mut out = Vec::new();
    leaves(v, &mut out);
    out.into_iter()
        .flatten()
        .filter(|t| t.dtype().is_float())
        .map(|t| t.to_f64_vec().iter().sum::<f64>())
        .sum()
}

fn finite(v: &exec::Value) -> bool {
    flat(v)
        .iter()
        .flatten()
        .all(|x| x.is_finite() && x.abs() < 1e6)
}

/// Whether a run-time value has the inferred type.
fn agrees(v: &exec::Value, t: &AbsVal) -> Result<(), String> {
    match (v, t) {
        (_, AbsVal::Any) => Ok(()),
        (exec::Value::Tuple(items), AbsVal::Tuple(ts)) => {
            if items.len() != ts.len() {
                return Err(format!(
                    "a tuple of {} at run time, of {} inferred",
                    items.len(),
                    ts.len()
                ));
            }
            items.iter().zip(ts).try_for_each(|(i, t)| agrees(i, t))
        }
        (exec::Value::Tensor(x), AbsVal::Tensor { dtype, shape }) => {
            let x = x.tensor();
            if x.dtype() != *dtype {
                return Err(format!("dtype {} at run time, {dtype} inferred", x.dtype()));
            }
            if let Some(dims) = shape.dims() {
                let ok = dims.len() == x.rank()
                    && dims.iter().zip(x.shape()).all(|(d, &n)| match d {
                        ir::Dim::Known(k) => *k as usize == n,
                        _ => true,
                    });
                if !ok {
                    return Err(format!("shape {:?} at run time, {t} inferred", x.shape()));
                }
            }
            Ok(())
        }
        (exec::Value::Tensor(x), AbsVal::Scalar { dtype, .. }) => {
            let x = x.tensor();
            if x.dtype() != *dtype || x.rank() != 0 {
                return Err(format!(
                    "{} {:?} at run time, a {dtype} scalar inferred",
                    x.dtype(),
                    x.shape()
                ));
            }
            Ok(())
        }
        (exec::Value::None, AbsVal::None) => Ok(()),
        (v, t) => Err(format!("{} at run time, {t} inferred", v.describe())),
    }
}

/// Central differences of `entry`'s summed output with respect to every
/// element of every argument, with step `h`.
fn finite_differences(
    ex: &mut exec::Executor,
    entry: &str,
    args: &[Tensor],
    h: f64,
) -> Result<Vec<Vec<f64>>, String> {
    let mut out = Vec::new();
    for i in 0..args.len() {
        let base = args[i].to_f64_vec();
        let mut d = Vec::with_capacity(base.len());
        for j in 0..base.len() {
            let mut eval = |delta: f64| -> Result<f64, String> {
                let mut data = base.clone();
                data[j] += delta;
                let mut a = args.to_vec();
                a[i] = Tensor::from_f64(args[i].shape().to_vec(), data).map_err(|e| e.0)?;
                Ok(total(&call(ex, entry, &a)?))
            };
            let (p, m) = (eval(h)?, eval(-h)?);
            d.push((p - m) / (2.0 * h));
        }
        out.push(d);
    }
    Ok(out)
}

fn close(a: f64, b: f64, rel: f64, abs: f64) -> bool {
    (a - b).abs() <= abs + rel * a.abs().max(b.abs())
}

/// Compares gradients elementwise; the first disagreement.
fn compare(got: &[Vec<f64>], want: &[Vec<f64>], rel: f64, abs: f64) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} gradients, {} expected", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.len() != w.len() {
            return Some(format!(
                "gradient {i} has {} elements, {} expected",
                g.len(),
                w.len()
            ));
        }
        for (j, (a, b)) in g.iter().zip(w).enumerate() {
            if !close(*a, *b, rel, abs) {
                return Some(format!("gradient {i}[{j}]: {a} vs {b}"));
            }
        }
    }
    None
}

/// Whether every element where the gradient disagrees with all the finite
/// differences is one where those differ among themselves (a jump at the
/// point: a difference quotient across it grows as the step shrinks, as
/// `TruncateMod(3 * x, x)` at any `x`); a smooth function's agree.
fn jumps(grad: &[Vec<f64>], fds: &[Vec<Vec<f64>>], abs: f64) -> Option<String> {
    let mut jumped = None;
    for (i, g) in grad.iter().enumerate() {
        for (j, &a) in g.iter().enumerate() {
            let at: Vec<f64> = fds.iter().map(|fd| fd[i][j]).collect();
            if at.iter().any(|&b| close(a, b, 1e-4, abs)) {
                continue;
            }
            let consistent = at
                .iter()
                .all(|&b| at.iter().all(|&c| close(b, c, 1e-3, 1e-6)));
            if consistent {
                return None;
            }
            jumped.get_or_insert(format!(
                "not differentiable here: gradient {i}[{j}] is {a}, finite differences {at:?}"
            ));
        }
    }
    jumped
}

/// How far rounding alone moves the gradient `base` of `entry` at `args`:
/// the largest change when every argument moves by about one ulp (fixed
/// pseudo-random signs), four times. Each intermediate value is rounded by
/// half an ulp as it is computed, so a computation this sensitive to its
/// inputs (a variance of values near 1e8 that cancel, found by seed 516964)
/// is as sensitive to the order of its sums: two orderings of them (with
/// and without clean-up) differing within a few times this are rounding,
/// not a wrong rewrite. A well-conditioned gradient's noise is ~1e-16.
fn rounding_noise(
    program: &IrProgram,
    entry: &str,
    args: &[Tensor],
    base: &[Vec<f64>],
) -> Result<f64, String> {
    let mut ex = executor(program);
    let mut noise = 0.0f64;
    let mut sign = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..4 {
        let moved: Vec<Tensor> = args
            .iter()
            .map(|a| {
                let data = a
                    .to_f64_vec()
                    .iter()
                    .map(|x| {
                        sign ^= sign << 13;
                        sign ^= sign >> 7;
                        sign ^= sign << 17;
                        let s = if sign & 1 == 0 { 1.0 } else { -1.0 };
                        x * (1.0 + s * f64::EPSILON)
                    })
                    .collect();
                Tensor::from_f64(a.shape().to_vec(), data).map_err(|e| e.0)
            })
            .collect::<Result<_, _>>()?;
        let g = flat(&call(&mut ex, entry, &moved)?);
        for (a, b) in g.iter().flatten().zip(base.iter().flatten()) {
            noise = noise.max((a - b).abs());
        }
    }
    Ok(noise)
}

/// The gradient program of `entry`, with or without clean-up.
fn gradient(
    program: &IrProgram,
    entry: &str,
    nparams: usize,
    optimize: bool,
) -> Result<autodiff::GradResult, String> {
    let target = autodiff::GradTarget {
        item: entry.to_string(),
        graph: GraphId(0),
    };
    let meta = MetaFn::Grad {
        wrt: Some((0..nparams).map(WrtItem::Param).collect()),
    };
    let options = autodiff::Options {
        optimize,
        composites: Some(analysis::composite::instance_body),
        ..Default::default()
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        autodiff::differentiate_with(program, &target, &meta, &options)
    }))
    .map_err(|p| format!("autodiff panicked: {}", panic_text(&p)))?
    .map_err(|e| e.0)
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "?".into())
}

fn with_result(program: &IrProgram, r: &autodiff::GradResult) -> IrProgram {
    let mut p = program.clone();
    p.graphs.extend(r.graphs.iter().cloned());
    p
}

/// Checks the gradient of `entry` (in `text`) at `args`: returns how many
/// gradient elements it compared with finite differences.
fn check_gradient(
    text: &str,
    entry: &str,
    args: &[Tensor],
    order: usize,
) -> Result<usize, Outcome> {
    let a = analyze(text).map_err(|e| fail(Kind::Check, order, e))?;
    let program = a.source.program();
    let mut ex = executor(&program);
    let value = call(&mut ex, entry, args).map_err(|e| fail(Kind::Run, order, e))?;
    if !finite(&value) {
        return Err(Outcome::Discarded("non-finite value".into()));
    }
    if let Some(out) = a.entries.get(entry).and_then(|e| e.output.clone()) {
        agrees(&value, &out).map_err(|e| fail(Kind::Types, order, format!("`{entry}`: {e}")))?;
    }
    let n = args.len();
    let mut grads: Vec<Vec<Vec<f64>>> = Vec::new();
    let mut results = Vec::new();
    let mut unoptimized = None;
    for optimize in [false, true] {
        let r = gradient(&program, entry, n, optimize)
            .map_err(|e| fail(Kind::Differentiate, order, e))?;
        let full = with_result(&program, &r);
        let mut gx = executor(&full);
        let v = call(&mut gx, &r.entry, args).map_err(|e| {
            fail(
                Kind::Run,
                order,
                format!(
                    "the gradient (optimize={optimize}) fails: {e}\n{}",
                    autodiff::print_result(&r)
                ),
            )
        })?;
        if !finite(&v) {
            return Err(Outcome::Discarded("non-finite gradient".into()));
        }
        grads.push(flat(&v));
        if !optimize {
            unoptimized = Some((full, r.entry.clone()));
        }
        results.push(r);
    }
    if let Some(d) = compare(&grads[0], &grads[1], 1e-9, 1e-12) {
        let (full, gentry) = unoptimized.expect("the unoptimized gradient ran");
        let noise = rounding_noise(&full, &gentry, args, &grads[0])
            .map_err(|e| fail(Kind::Run, order, e))?;
        if compare(&grads[0], &grads[1], 0.0, 8.0 * noise + 1e-12).is_some() {
            return Err(fail(
                Kind::CleanUp,
                order,
                format!("with and without clean-up: {d} (rounding noise about {noise:.3e})"),
            ));
        }
    }
    // The printed gradient program.
    let printed = autodiff::print_result(&results[1]);
    let full_text = format!("{text}\n{printed}");
    let pa = analyze(&full_text).map_err(|e| {
        fail(
            Kind::PrintedCheck,
            order,
            format!("{e}\n--- printed:\n{printed}"),
        )
    })?;
    let mut px = executor(&pa.source.program());
    let pv = call(&mut px, &results[1].entry, args).map_err(|e| {
        fail(
            Kind::PrintedValue,
            order,
            format!("the printed gradient fails to run: {e}\n--- printed:\n{printed}"),
        )
    })?;
    if let Some(d) = compare(&flat(&pv), &grads[1], 1e-9, 1e-12) {
        return Err(fail(
            Kind::PrintedValue,
            order,
            format!("printed gradient: {d}\n--- printed:\n{printed}"),
        ));
    }
    if let Some(out) = pa
        .entries
        .get(&results[1].entry)
        .and_then(|e| e.output.clone())
    {
        agrees(&pv, &out).map_err(|e| {
            fail(
                Kind::Types,
                order,
                format!("`{}`: {e}\n--- printed:\n{printed}", results[1].entry),
            )
        })?;
    }
    // Finite differences (a few steps: one may straddle a kink).
    // Float literals, and the constants gradient rules use (`SeLU`'s scale),
    // are f32 (spec §2): an element whose terms cancel (a derivative that is
    // 0) keeps their rounding, about 1e-7 of the values involved. The
    // absolute tolerance scales with them.
    let scale = total(&value).abs().max(
        grads[1]
            .iter()
            .flatten()
            .fold(0.0f64, |m, x| m.max(x.abs())),
    );
    let abs = 1e-6 * (1.0 + scale);
    let mut last = String::new();
    let mut fds = Vec::new();
    for h in [1e-6, 1e-5, 1e-7] {
        let fd =
            finite_differences(&mut ex, entry, args, h).map_err(|e| fail(Kind::Run, order, e))?;
        match compare(&grads[1], &fd, 1e-4, abs) {
            None => return Ok(fd.iter().map(Vec::len).sum()),
            Some(d) => last = d,
        }
        fds.push(fd);
    }
    if let Some(why) = jumps(&grads[1], &fds, abs) {
        return Err(Outcome::Discarded(why));
    }
    Err(fail(
        Kind::FiniteDifferences,
        order,
        format!(
            "{last}\n--- gradient:\n{}",
            autodiff::print_result(&results[1])
        ),
    ))
}

/// The second-order program: `g2` projects `grad(f)` on smooth weights.
pub fn second_order_text(p: &Program, text: &str) -> String {
    let params: Vec<String> = p
        .params
        .iter()
        .map(|(n, s)| {
            format!(
                "{n}: {}",
                crate::gen::ty_text(&crate::gen::Ty::F(s.clone()))
            )
        })
        .collect();
    let names = p.param_names();
    let wrt: Vec<String> = (0..names.len()).map(|i| i.to_string()).collect();
    let wrt = if wrt.len() == 1 {
        format!("({},)", wrt[0])
    } else {
        format!("({})", wrt.join(", "))
    };
    let terms: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("ReduceSum(gs[{i}] * Cos({n} * 0.7))"))
        .collect();
    format!(
        "{text}\ngraph g2({}) {{\n  gs = grad({ENTRY}, wrt={wrt})({})\n  return {}\n}}\n",
        params.join(", "),
        names.join(", "),
        terms.join(" + ")
    )
}

fn check_at(p: &Program, text: &str, seed: u64) -> Outcome {
    let args: Vec<Tensor> = p
        .params
        .iter()
        .enumerate()
        .map(
            |(i, (_, s))| match random_value(s, seed.wrapping_add(i as u64 * 7919)) {
                ops::KValue::Tensor(t) => t,
                _ => unreachable!(),
            },
        )
        .collect();
    let first = tryo!(check_gradient(text, ENTRY, &args, 1));
    let second = tryo!(check_gradient(&second_order_text(p, text), "g2", &args, 2));
    tryo!(check_transforms(p, text, &args, seed));
    Outcome::Passed { first, second }
}

/// The transforms' program: `vf` maps `f` over a leading batch axis of
/// every parameter; `jr`/`jf` are its Jacobians and `gr` its gradient
/// with respect to every parameter.
pub fn transforms_text(p: &Program, text: &str, batch: usize) -> String {
    use crate::gen::{ty_text, Ty};
    let names = p.param_names();
    let typed = |extra: &[usize]| -> Vec<String> {
        p.params
            .iter()
            .map(|(n, s)| {
                let mut shape = extra.to_vec();
                shape.extend(s);
                format!("{n}: {}", ty_text(&Ty::F(shape)))
            })
            .collect()
    };
    let wrt: Vec<String> = (0..names.len()).map(|i| i.to_string()).collect();
    let wrt = if wrt.len() == 1 {
        format!("({},)", wrt[0])
    } else {
        format!("({})", wrt.join(", "))
    };
    let (plain, batched, args) = (
        typed(&[]).join(", "),
        typed(&[batch]).join(", "),
        names.join(", "),
    );
    let mut out = format!("{text}\ngraph vf({batched}) {{\n  return vmap({ENTRY})({args})\n}}\n");
    for (g, m) in [("jr", "jacrev"), ("jf", "jacfwd"), ("gr", "grad")] {
        out.push_str(&format!(
            "graph {g}({plain}) {{\n  return {m}({ENTRY}, wrt={wrt})({args})\n}}\n"
        ));
    }
    out
}

/// Part 4 of the checks (see the module's doc).
fn check_transforms(p: &Program, text: &str, args: &[Tensor], seed: u64) -> Result<(), Outcome> {
    const BATCH: usize = 3;
    let text = transforms_text(p, text, BATCH);
    let a = analyze(&text).map_err(|e| fail(Kind::Vmap, 1, e))?;
    let program = a.source.program();
    let mut ex = executor(&program);
    // A batch: the checked point, then two others.
    let examples: Vec<Vec<Tensor>> = (0..BATCH as u64)
        .map(|b| {
            if b == 0 {
                return args.to_vec();
            }
            p.params
                .iter()
                .enumerate()
                .map(|(i, (_, s))| {
                    match random_value(s, seed.wrapping_add(b * 104_729 + i as u64 * 7919)) {
                        ops::KValue::Tensor(t) => t,
                        _ => unreachable!(),
                    }
                })
                .collect()
        })
        .collect();
    let stacked: Vec<Tensor> = (0..args.len())
        .map(|i| {
            let mut data = Vec::new();
            for e in &examples {
                data.extend(e[i].to_f64_vec());
            }
            let mut shape = vec![BATCH];
            shape.extend(args[i].shape());
            Tensor::from_f64(shape, data).expect("sizes")
        })
        .collect();
    let mut each = Vec::new();
    for e in &examples {
        let v = call(&mut ex, ENTRY, e).map_err(|e| fail(Kind::Run, 1, e))?;
        if !finite(&v) {
            // The other examples leave the program's domain: the property
            // cannot be judged there, but the checks at the point stand.
            return Ok(());
        }
        each.push(flat(&v));
    }
    let mapped = call(&mut ex, "vf", &stacked).map_err(|e| fail(Kind::Vmap, 1, e))?;
    let mapped = flat(&mapped);
    // Output k of the batch is example outputs k stacked: example b's
    // elements are the b-th slice of each output.
    let want: Vec<Vec<f64>> = (0..each[0].len())
        .map(|k| each.iter().flat_map(|e| e[k].clone()).collect())
        .collect();
    if let Some(d) = compare(&mapped, &want, 1e-12, 1e-12) {
        let notes = ex.transform_notes().join("; ");
        return Err(fail(
            Kind::Vmap,
            1,
            format!("vmap(f) against each example: {d} ({notes})"),
        ));
    }
    // A scalar f: its Jacobians are its gradient.
    if p.extra.is_none() {
        let grad = flat(&call(&mut ex, "gr", args).map_err(|e| fail(Kind::Run, 1, e))?);
        for j in ["jr", "jf"] {
            let v = flat(&call(&mut ex, j, args).map_err(|e| fail(Kind::Jacobian, 1, e))?);
            if let Some(d) = compare(&v, &grad, 1e-9, 1e-9) {
                return Err(fail(
                    Kind::Jacobian,
                    1,
                    format!("`{j}` against the gradient: {d}"),
                ));
            }
        }
    }
    Ok(())
}

/// Checks a program given as text (a fixture): its entry `f` takes f64
/// tensors of static shapes. At a few points, as [`check`].
pub fn check_source(text: &str, seed: u64) -> Outcome {
    let a = match analyze(text) {
        Ok(a) => a,
        Err(e) => return fail(Kind::Check, 1, e),
    };
    let Some(g) = a.source.graphs.get(ENTRY) else {
        return fail(Kind::Check, 1, format!("no graph `{ENTRY}`"));
    };
    let body = &g.body;
    let mut params = Vec::new();
    for &p in &body.graph(body.root()).params {
        let n = body.node(p);
        let shape = match &n.annotation {
            Some((ir::Ty::Tensor(DType::F64, shape), _)) => shape.dims().and_then(|ds| {
                ds.iter()
                    .map(|d| match d {
                        ir::Dim::Known(k) => Some(*k as usize),
                        _ => None,
                    })
                    .collect::<Option<Vec<usize>>>()
            }),
            _ => None,
        };
        let Some(shape) = shape else {
            return fail(
                Kind::Check,
                1,
                "the entry's parameters must be f64 tensors of static shapes",
            );
        };
        params.push((n.name.clone().unwrap_or_default(), shape));
    }
    let p = Program {
        seed,
        helpers: Vec::new(),
        params,
        stmts: Vec::new(),
        outputs: Vec::new(),
        extra: None,
    };
    let mut last = None;
    for attempt in 0..3u64 {
        match check_at(&p, text, seed.wrapping_mul(31).wrapping_add(attempt)) {
            Outcome::Failed(f) if f.kind == Kind::FiniteDifferences => last = Some(f),
            other => return other,
        }
    }
    Outcome::Failed(last.expect("a failure"))
}

/// The gradient of `entry`'s summed output with respect to every parameter
/// at `args` (clean-up on), flattened per parameter: for comparing with
/// another implementation.
pub fn gradient_values(text: &str, entry: &str, args: &[Tensor]) -> Result<Vec<Vec<f64>>, String> {
    let a = analyze(text)?;
    let program = a.source.program();
    let r = gradient(&program, entry, args.len(), true)?;
    let mut ex = executor(&with_result(&program, &r));
    Ok(flat(&call(&mut ex, &r.entry, args)?))
}

/// The failures a long run has seen, by kind and first line, to report
/// each once.
#[derive(Default)]
pub struct Seen(pub HashMap<(Kind, String), usize>);

impl Seen {
    pub fn first(&mut self, f: &Failure) -> bool {
        let line = f.message.lines().next().unwrap_or("").to_string();
        let key = (f.kind.clone(), line);
        let n = self.0.entry(key).or_insert(0);
        *n += 1;
        *n == 1
    }
}

/// An f64 argument (for tests).
pub fn argument(shape: &[usize], seed: u64) -> Tensor {
    match random_value(shape, seed) {
        ops::KValue::Tensor(t) => t.cast(DType::F64),
        _ => unreachable!(),
    }
}
