//! Random well-typed programs, built from the registry's schemas.
//!
//! A program is an entry graph `f` over f64 tensor parameters whose body is a
//! list of statements, each binding a new name: primitive calls (any
//! registry primitive with a gradient rule and a kernel: its attributes are
//! drawn from its schema or its samples, and its shape rule decides whether
//! the call is well typed), weak scalars, closures and their calls, `if`/`else`
//! on a data-dependent condition, tuples and indexing, calls of generic helper
//! graphs, a recursive graph on a decreasing counter, and metafunctions
//! (`grad`, `value_and_grad`, `vjp`, `jvp`, `hvp`) of helpers and closures.
//! `f` returns the sum of some of the values it made (or a tuple).

use std::collections::HashSet;

use ir::{AbsVal, AttrValue, DType};
use ops::{AttrType, Category, Gradgen, ParamKind};

use crate::rng::Rng;

/// A value's type.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// An f64 tensor of this shape.
    F(Vec<usize>),
    /// A function (closures and nested graphs): never substituted.
    Func,
    Tuple(Vec<Ty>),
}

/// One statement of the entry graph: `name = expr` (or a nested graph when
/// `expr` starts with `graph`).
#[derive(Debug, Clone)]
pub struct Stmt {
    pub name: String,
    pub expr: String,
    pub ty: Ty,
}

/// A generated program.
#[derive(Debug, Clone)]
pub struct Program {
    pub seed: u64,
    /// Top-level helper graphs, by name, with their text.
    pub helpers: Vec<(String, String)>,
    /// The entry's parameters: names and shapes (f64 tensors).
    pub params: Vec<(String, Vec<usize>)>,
    pub stmts: Vec<Stmt>,
    /// The values summed into the output.
    pub outputs: Vec<String>,
    /// A value returned next to the sum, making the output a tuple.
    pub extra: Option<String>,
}

pub const ENTRY: &str = "f";

impl Program {
    /// The program's text.
    pub fn text(&self) -> String {
        let body = self.entry_text();
        let mut out = String::new();
        for (name, text) in &self.helpers {
            if mentions(&body, name)
                || self
                    .helpers
                    .iter()
                    .any(|(n, t)| n != name && mentions(t, name) && mentions(&body, n))
            {
                out.push_str(text);
                out.push('\n');
            }
        }
        out.push_str(&body);
        out
    }

    fn entry_text(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|(n, s)| format!("{n}: {}", ty_text(&Ty::F(s.clone()))))
            .collect();
        let mut out = format!("graph {ENTRY}({}) {{\n", params.join(", "));
        for s in &self.stmts {
            if s.expr.starts_with("graph ") {
                for line in s.expr.lines() {
                    out.push_str(&format!("  {line}\n"));
                }
            } else {
                out.push_str(&format!("  {} = {}\n", s.name, s.expr));
            }
        }
        let sum = if self.outputs.is_empty() {
            "ReduceSum(Square(".to_string() + &self.params[0].0 + "))"
        } else {
            self.outputs
                .iter()
                .map(|o| format!("ReduceSum({o})"))
                .collect::<Vec<_>>()
                .join(" + ")
        };
        match &self.extra {
            Some(e) => out.push_str(&format!("  return ({sum}, {e})\n}}\n")),
            None => out.push_str(&format!("  return {sum}\n}}\n")),
        }
        out
    }

    /// Names of the parameters.
    pub fn param_names(&self) -> Vec<String> {
        self.params.iter().map(|(n, _)| n.clone()).collect()
    }
}

/// Whether `text` uses identifier `name`.
pub fn mentions(text: &str, name: &str) -> bool {
    identifiers(text).any(|t| t == name)
}

fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .filter(|t| !t.is_empty())
}

/// `text` with identifier `from` replaced by `to`.
pub fn replace_ident(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word == from {
            out.push_str(to);
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

pub fn ty_text(t: &Ty) -> String {
    match t {
        Ty::F(s) => format!(
            "f64[{}]",
            s.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Ty::Func => "fn".into(),
        Ty::Tuple(items) => {
            let parts: Vec<String> = items.iter().map(ty_text).collect();
            if parts.len() == 1 {
                format!("({},)", parts[0])
            } else {
                format!("({})", parts.join(", "))
            }
        }
    }
}

/// A float literal the lexer reads back exactly.
pub fn float_text(x: f64) -> String {
    let s = format!("{x:?}");
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}

/// A primitive the generator may call, with its samples (for attribute
/// values and integer inputs).
#[derive(Clone)]
pub struct Candidate {
    pub op: &'static ops::OpDef,
    pub samples: Vec<ops::eager::Sample>,
}

/// Records the primitives a gradient rule emits.
struct Recorder {
    inner: ops::eager::EagerGrad,
    emitted: Vec<&'static str>,
}

impl ops::GradBuilder for Recorder {
    fn prim(
        &mut self,
        name: &str,
        inputs: &[ops::GNode],
        attrs: Vec<(&'static str, AttrValue)>,
    ) -> ops::GNode {
        if let Some(op) = ops::lookup(name) {
            self.emitted.push(op.name);
        }
        self.inner.prim(name, inputs, attrs)
    }
    fn scalar(&mut self, value: f64) -> ops::GNode {
        self.inner.scalar(value)
    }
    fn int(&mut self, value: i64) -> ops::GNode {
        self.inner.int(value)
    }
    fn tuple_get(&mut self, tuple: ops::GNode, index: usize) -> ops::GNode {
        self.inner.tuple_get(tuple, index)
    }
    fn make_tuple(&mut self, items: &[ops::GNode]) -> ops::GNode {
        self.inner.make_tuple(items)
    }
}

/// Whether every primitive `op`'s gradient rule emits (on its samples) has
/// a gradient rule too, so that its gradient can be differentiated again.
fn twice_differentiable(op: &ops::OpDef, samples: &[ops::eager::Sample]) -> bool {
    let Some(rule) = op.grad else { return false };
    for s in samples {
        let Ok(out) = ops::eager::call(s.op, &s.inputs, s.attrs.clone()) else {
            continue;
        };
        let given: Vec<(String, AttrValue)> = s
            .attrs
            .iter()
            .filter_map(|(k, v)| Some((k.to_string(), ops::check_attr(op, k, v).ok()?)))
            .collect();
        let attrs = ops::resolve_attrs(op, &given);
        let mut b = Recorder {
            inner: ops::eager::EagerGrad::new(DType::F64),
            emitted: Vec::new(),
        };
        let ins: Vec<ops::GNode> = s.inputs.iter().map(|v| b.inner.push(v.clone())).collect();
        let o = b.inner.push(out.clone());
        let d = b.inner.push(out);
        let values: Vec<AbsVal> = s.inputs.iter().map(ops::eager::abstract_of).collect();
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rule(
                &mut b,
                &ops::GradCall {
                    inputs: &ins,
                    out: o,
                    dout: d,
                    attrs: &attrs,
                    input_values: &values,
                },
            );
        }))
        .is_ok();
        if ok
            && b.emitted.iter().any(|e| {
                ops::lookup(e).is_some_and(|o| o.grad.is_none() && o.category == Category::Internal)
            })
        {
            return false;
        }
    }
    true
}

pub fn candidates() -> Vec<Candidate> {
    let samples = ops::defs::samples();
    let mut out: Vec<Candidate> = ops::registry()
        .values()
        .filter(|op| {
            op.grad.is_some()
                && op.kernel.is_some()
                && !op.variadic
                && !matches!(
                    op.category,
                    Category::Internal
                        | Category::Structure
                        | Category::State
                        | Category::Backward
                        | Category::TensorMaker
                )
                && ops::effect_of(op.name).is_none()
                && op.traits.gradgen != Gradgen::Avoid
                && (1..=4).contains(&op.input_count())
        })
        .map(|op| Candidate {
            op,
            samples: samples
                .iter()
                .filter(|s| s.op == op.name)
                .cloned()
                .collect(),
        })
        .filter(|c| twice_differentiable(c.op, &c.samples))
        .collect();
    out.sort_by_key(|c| c.op.name);
    out
}

/// The pieces a program is made of.
pub struct Generator<'c> {
    rng: Rng,
    cands: &'c [Candidate],
    /// Values in scope: name and type.
    pool: Vec<(String, Ty)>,
    stmts: Vec<Stmt>,
    helpers: Vec<(String, String)>,
    counter: usize,
    /// Allow metafunctions (off inside helpers made for them).
    pub metas: bool,
}

/// Unary primitives that keep the shape (for helpers, branches and
/// recursion): the records marked so, by name.
fn smooth_unary() -> &'static [&'static str] {
    static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names: Vec<_> = ops::registry()
            .values()
            .filter(|op| op.traits.gradgen == Gradgen::SmoothUnary)
            .map(|op| op.name)
            .collect();
        names.sort_unstable();
        names
    })
}

impl<'c> Generator<'c> {
    pub fn new(seed: u64, cands: &'c [Candidate]) -> Generator<'c> {
        Generator {
            rng: Rng::new(seed),
            cands,
            pool: Vec::new(),
            stmts: Vec::new(),
            helpers: Vec::new(),
            counter: 0,
            metas: true,
        }
    }

    fn fresh(&mut self, base: &str) -> String {
        self.counter += 1;
        format!("{base}{}", self.counter)
    }

    fn shape(&mut self) -> Vec<usize> {
        let rank = *self.rng.pick(&[0, 1, 1, 2, 2, 2, 3]);
        (0..rank).map(|_| *self.rng.pick(&[1, 2, 3, 4])).collect()
    }

    /// A program from this generator's seed.
    pub fn program(mut self, seed: u64) -> Program {
        let nparams = self.rng.range(1, 3) as usize;
        let mut params = Vec::new();
        for i in 0..nparams {
            let s = self.shape();
            let name = format!("p{i}");
            self.pool.push((name.clone(), Ty::F(s.clone())));
            params.push((name, s));
        }
        let nstmts = self.rng.range(2, 9) as usize;
        for _ in 0..nstmts {
            self.statement();
        }
        // The output: the sum of the last few float values (and, sometimes,
        // a tuple with another value).
        let floats: Vec<String> = self
            .pool
            .iter()
            .filter(|(_, t)| matches!(t, Ty::F(_)))
            .map(|(n, _)| n.clone())
            .collect();
        let take = self.rng.range(1, 3) as usize;
        let outputs: Vec<String> = floats.iter().rev().take(take).cloned().collect();
        let extra = if self.rng.chance(0.2) {
            Some(self.rng.pick(&floats).clone())
        } else {
            None
        };
        Program {
            seed,
            helpers: self.helpers,
            params,
            stmts: self.stmts,
            outputs,
            extra,
        }
    }

    fn floats(&self) -> Vec<(String, Vec<usize>)> {
        self.pool
            .iter()
            .filter_map(|(n, t)| match t {
                Ty::F(s) => Some((n.clone(), s.clone())),
                _ => None,
            })
            .collect()
    }

    fn pick_float(&mut self) -> (String, Vec<usize>) {
        let fs = self.floats();
        // Later values more often: they depend on more.
        let i = if self.rng.chance(0.5) {
            fs.len() - 1 - self.rng.below(fs.len().min(3))
        } else {
            self.rng.below(fs.len())
        };
        fs[i].clone()
    }

    fn push(&mut self, name: String, expr: String, ty: Ty) {
        self.pool.push((name.clone(), ty.clone()));
        self.stmts.push(Stmt { name, expr, ty });
    }

    fn statement(&mut self) {
        for _ in 0..20 {
            let made = match self.rng.below(20) {
                0..=8 => self.prim_stmt(),
                9 => self.weak_scalar(),
                10 => self.closure(),
                11 => self.branch(),
                12 => self.tuple(),
                13 => self.helper_call(),
                14 => self.recursion(),
                15..=17 if self.metas => self.meta(),
                _ => self.prim_stmt(),
            };
            if made {
                return;
            }
        }
    }

    /// A call of a registry primitive on values of the pool.
    fn prim_stmt(&mut self) -> bool {
        let Some((expr, ty)) = self.prim_expr(None) else {
            return false;
        };
        let name = self.fresh("v");
        self.push(name, expr, ty);
        true
    }

    /// A primitive call (on `only` as its float inputs when given): its text
    /// and type.
    fn prim_expr(&mut self, only: Option<(&str, &[usize])>) -> Option<(String, Ty)> {
        for _ in 0..30 {
            let cand = self.rng.pick(self.cands).clone();
            if let Some(r) = self.try_prim(&cand, only) {
                return Some(r);
            }
        }
        None
    }

    fn try_prim(
        &mut self,
        cand: &Candidate,
        only: Option<(&str, &[usize])>,
    ) -> Option<(String, Ty)> {
        let op = cand.op;
        let sample = if cand.samples.is_empty() {
            None
        } else {
            Some(self.rng.pick(&cand.samples).clone())
        };
        let mut args: Vec<String> = Vec::new();
        let mut abs: Vec<AbsVal> = Vec::new();
        let mut concrete: Vec<ops::KValue> = Vec::new();
        let mut first_rank = None;
        let mut first_numel = 1usize;
        let mut used = HashSet::new();
        for i in 0..op.input_count() {
            let sample_input = sample.as_ref().and_then(|s| s.inputs.get(i));
            match sample_input {
                Some(ops::KValue::Tensor(t)) if !t.dtype().is_float() => {
                    // An integer input (indices): the sample's, as a literal.
                    args.push(int_literal(t)?);
                    abs.push(AbsVal::tensor(
                        t.dtype(),
                        &t.shape().iter().map(|&d| d as i64).collect::<Vec<_>>(),
                    ));
                    concrete.push(ops::KValue::Tensor(t.clone()));
                }
                Some(ops::KValue::Tuple(_)) => return None,
                _ => {
                    let (n, s) = match only {
                        Some((n, s)) => (n.to_string(), s.to_vec()),
                        None => self.pick_float(),
                    };
                    // The same value twice makes ties (non-smooth points).
                    if !used.insert(n.clone()) && !SMOOTH_BINARY.contains(&op.name) {
                        return None;
                    }
                    first_rank.get_or_insert(s.len());
                    if concrete
                        .iter()
                        .all(|c| matches!(c, ops::KValue::Tensor(t) if !t.dtype().is_float()))
                    {
                        first_numel = s.iter().product();
                    }
                    abs.push(AbsVal::tensor(
                        DType::F64,
                        &s.iter().map(|&d| d as i64).collect::<Vec<_>>(),
                    ));
                    concrete.push(random_value(&s, self.rng.next_u64()));
                    args.push(n);
                }
            }
        }
        let rank = first_rank.unwrap_or(0);
        let mut attrs: Vec<(&'static str, AttrValue)> = Vec::new();
        for p in op.attrs() {
            let ParamKind::Attr { ty, default } = p.kind else {
                continue;
            };
            let from_sample = sample
                .as_ref()
                .and_then(|s| s.attrs.iter().find(|(k, _)| *k == p.name))
                .map(|(_, v)| v.clone());
            let from_sample = from_sample.filter(finite_attr);
            let v = if p.name.starts_with("eps") {
                // Small, as meant: a large one clamps (MindSpore's rules
                // differentiate through the clamp, e.g. `LpNorm`'s).
                default.map(|_| AttrValue::float(1e-9)).or(from_sample)
            } else if from_sample.is_some() && self.rng.chance(0.5) {
                from_sample
            } else if default.is_some() && self.rng.chance(0.4) {
                None
            } else {
                self.random_attr(p.name, ty, rank, first_numel)
                    .or(from_sample)
            };
            match v {
                Some(v) => attrs.push((p.name, v)),
                None if default.is_none() => return None,
                None => {}
            }
        }
        let given: Vec<(String, AttrValue)> = attrs
            .iter()
            .map(|(k, v)| Some((k.to_string(), ops::check_attr(op, k, v).ok()?)))
            .collect::<Option<_>>()?;
        let resolved = ops::resolve_attrs(op, &given);
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            (op.infer)(&ops::InferCall {
                op,
                inputs: &abs,
                attrs: &resolved,
            })
        }))
        .ok()?
        .ok()?;
        let ty = float_ty(&out)?;
        if ty_numel(&ty) > 64 || ty_numel(&ty) == 0 {
            return None;
        }
        // The kernel runs on such values, to finite numbers.
        let value = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ops::eager::call(op.name, &concrete, attrs.clone())
        }))
        .ok()?
        .ok()?;
        if !finite(&value) {
            return None;
        }
        // Arguments in signature order: inputs positionally while no
        // attribute came before them, by keyword after one did.
        let mut all = Vec::new();
        let mut inputs = args.into_iter();
        let mut keyword = false;
        for p in op.params() {
            if p.is_input() {
                let a = inputs.next()?;
                all.push(if keyword {
                    format!("{}={a}", p.name)
                } else {
                    a
                });
            } else {
                keyword = true;
                if let Some((k, v)) = attrs.iter().find(|(k, _)| *k == p.name) {
                    all.push(format!("{k}={v}"));
                }
            }
        }
        let expr = format!("{}({})", op.name, all.join(", "));
        // A tuple result: take a float element.
        if let Ty::Tuple(items) = &ty {
            let floats: Vec<usize> = (0..items.len())
                .filter(|&i| matches!(items[i], Ty::F(_)))
                .collect();
            if floats.is_empty() {
                return None;
            }
            let i = *self.rng.pick(&floats);
            return Some((format!("{expr}[{i}]"), items[i].clone()));
        }
        Some((expr, ty))
    }

    fn random_attr(
        &mut self,
        name: &str,
        ty: AttrType,
        rank: usize,
        numel: usize,
    ) -> Option<AttrValue> {
        let r = rank as i64;
        let int = AttrValue::Int;
        let ints = |v: Vec<i64>| AttrValue::Tuple(v.into_iter().map(AttrValue::Int).collect());
        Some(match ty {
            AttrType::Int => {
                if r > 0 && (name.contains("axis") || name.contains("dim")) {
                    int(self.rng.range(-r, r - 1))
                } else {
                    int(self.rng.range(0, 2))
                }
            }
            AttrType::Ints => {
                if r == 0 {
                    ints(vec![])
                } else if self.rng.chance(0.4) {
                    int(self.rng.range(-r, r - 1))
                } else {
                    let mut axes: Vec<i64> = (0..r).filter(|_| self.rng.chance(0.5)).collect();
                    if axes.is_empty() && self.rng.chance(0.5) {
                        axes.push(self.rng.range(0, r - 1));
                    }
                    ints(axes)
                }
            }
            AttrType::IntTuple => match name {
                "perm" => {
                    let mut p: Vec<i64> = (0..r).collect();
                    for i in (1..p.len()).rev() {
                        let j = self.rng.below(i + 1);
                        p.swap(i, j);
                    }
                    ints(p)
                }
                "shape" | "size" => ints(factor(numel, &mut self.rng)),
                "multiples" => ints((0..r.max(1)).map(|_| self.rng.range(1, 2)).collect()),
                _ => return None,
            },
            AttrType::Bool => AttrValue::Bool(self.rng.chance(0.5)),
            AttrType::Float => AttrValue::float(0.25 + 0.5 * self.rng.unit()),
            AttrType::Str(allowed) if !allowed.is_empty() => {
                AttrValue::Str(self.rng.pick(allowed).to_string())
            }
            _ => return None,
        })
    }

    /// A binary operator with a weak scalar literal.
    fn weak_scalar(&mut self) -> bool {
        let (v, s) = self.pick_float();
        let lit = if self.rng.chance(0.3) {
            self.rng.range(1, 3).to_string()
        } else {
            float_text(((self.rng.unit() * 2.0 - 1.0) * 100.0).round() / 100.0 + 0.05)
        };
        let expr = match self.rng.below(4) {
            0 => format!("{v} * {lit}"),
            1 => format!("{lit} - {v}"),
            2 => format!("{v} + {lit}"),
            _ => format!("{v} / (2.0 + Sin({v}))"),
        };
        let name = self.fresh("w");
        self.push(name, expr, Ty::F(s));
        true
    }

    /// A unary shape-keeping expression of `x`.
    fn unary(&mut self, x: &str) -> String {
        let op = self.rng.pick(smooth_unary());
        format!("{op}({x})")
    }

    /// A closure over a captured value, called (or a nested graph).
    fn closure(&mut self) -> bool {
        let (a, sa) = self.pick_float();
        let (b, sb) = self.pick_float();
        let k = self.fresh("k");
        let Some(combined) = broadcast(&sa, &sb) else {
            return false;
        };
        let body = format!("{}(y) * {b}", self.rng.pick(smooth_unary()));
        if self.rng.chance(0.5) {
            self.push(k.clone(), format!("fn(y) => {body}"), Ty::Func);
        } else {
            let inner = self.unary("y");
            let text = format!(
                "graph {k}(y) {{\n  t = {inner}\n  return t * {b} + {}\n}}",
                self.unary("y")
            );
            self.push(k.clone(), text, Ty::Func);
        }
        let name = self.fresh("c");
        let twice = self.rng.chance(0.3) && combined == sa;
        let expr = if twice {
            format!("{k}({k}({a}))")
        } else {
            format!("{k}({a})")
        };
        self.push(name, expr, Ty::F(combined));
        true
    }

    /// `if` on a data-dependent condition; both branches keep the shape.
    fn branch(&mut self) -> bool {
        let (c, _) = self.pick_float();
        let (v, s) = self.pick_float();
        let (then, els) = (self.unary(&v), self.unary(&v));
        let cmp = self.rng.pick(&[">", "<"]);
        let name = self.fresh("b");
        let expr = format!("if ReduceSum({c}) {cmp} 0.0 {{ {then} }} else {{ {els} * 0.5 }}");
        self.push(name, expr, Ty::F(s));
        true
    }

    /// A tuple and an element of it.
    fn tuple(&mut self) -> bool {
        let (a, sa) = self.pick_float();
        let (b, sb) = self.pick_float();
        let t = self.fresh("t");
        let ta = self.unary(&a);
        self.push(
            t.clone(),
            format!("({ta}, {b})"),
            Ty::Tuple(vec![Ty::F(sa.clone()), Ty::F(sb.clone())]),
        );
        let name = self.fresh("e");
        let (i, s) = if self.rng.chance(0.5) {
            (0, sa)
        } else {
            (1, sb)
        };
        self.push(name, format!("{t}[{i}]"), Ty::F(s));
        true
    }

    /// A generic helper graph (no annotations), called on pool values; some
    /// return tuples that are destructured.
    fn helper_call(&mut self) -> bool {
        let (a, sa) = self.pick_float();
        let (b, sb) = self.pick_float();
        let Some(s) = broadcast(&sa, &sb) else {
            return false;
        };
        let h = self.fresh("h");
        let (u1, u2) = (self.unary("x"), self.unary("y"));
        let tuple = self.rng.chance(0.4);
        let text = if tuple {
            format!("graph {h}(x, y) {{\n  s = {u1} * y\n  return (s, {u2})\n}}\n")
        } else {
            format!("graph {h}(x, y) {{\n  s = {u1} * y\n  return s + {u2}\n}}\n")
        };
        self.helpers.push((h.clone(), text));
        let name = self.fresh("r");
        if tuple {
            self.push(
                name.clone(),
                format!("{h}({a}, {b})"),
                Ty::Tuple(vec![Ty::F(s.clone()), Ty::F(sb)]),
            );
            let e = self.fresh("e");
            self.push(e, format!("{name}[0]"), Ty::F(s));
        } else {
            self.push(name, format!("{h}({a}, {b})"), Ty::F(s));
        }
        true
    }

    /// A recursive graph on a decreasing counter.
    fn recursion(&mut self) -> bool {
        let (a, sa) = self.pick_float();
        let g = self.fresh("rec");
        let (u1, u2) = (self.unary("x"), self.unary(&format!("{g}(z, n - 1)")));
        let text = format!(
            "graph {g}(x, n: i64) {{\n  z = {u1} * 0.9\n  r = if n > 0 {{ {u2} + x * 0.5 }} else {{ x }}\n  return r\n}}\n"
        );
        self.helpers.push((g.clone(), text));
        let name = self.fresh("q");
        let depth = self.rng.range(0, 3);
        self.push(name, format!("{g}({a}, {depth})"), Ty::F(sa));
        true
    }

    /// A metafunction of a helper or a closure, applied.
    fn meta(&mut self) -> bool {
        let (a, sa) = self.pick_float();
        // A scalar-valued function of `x`: a helper graph or a closure over a
        // pool value.
        let closure = self.rng.chance(0.4);
        let (b, sb) = self.pick_float();
        let Some(_) = broadcast(&sa, &sb) else {
            return false;
        };
        let mut inner = Generator::new(self.rng.next_u64(), self.cands);
        inner.metas = false;
        inner.pool.push(("x".into(), Ty::F(sa.clone())));
        let Some((e1, _)) = inner.prim_expr(Some(("x", &sa))) else {
            return false;
        };
        let body = format!("ReduceSum({e1}) + ReduceSum({} * x)", self.unary("x"));
        let f = if closure {
            let k = self.fresh("gk");
            let body = format!("{body} + ReduceSum(Sin(x) * {b})");
            self.push(k.clone(), format!("fn(x) => {body}"), Ty::Func);
            k
        } else {
            let h = self.fresh("s");
            self.helpers
                .push((h.clone(), format!("graph {h}(x) {{\n  return {body}\n}}\n")));
            h
        };
        let name = self.fresh("g");
        match self.rng.below(6) {
            0 => {
                self.push(name, format!("grad(grad({f}))({a})"), Ty::F(sa));
            }
            1 => {
                let vg = self.fresh("vg");
                self.push(
                    vg.clone(),
                    format!("value_and_grad({f})({a})"),
                    Ty::Tuple(vec![Ty::F(vec![]), Ty::F(sa.clone())]),
                );
                self.push(name, format!("{vg}[1] * {vg}[0]"), Ty::F(sa));
            }
            2 => {
                let vj = self.fresh("vj");
                self.push(
                    vj.clone(),
                    format!("vjp({f})({a})"),
                    Ty::Tuple(vec![Ty::F(vec![]), Ty::Func]),
                );
                self.push(name, format!("{vj}[1]({vj}[0])[0]"), Ty::F(sa));
            }
            3 => {
                let (v, sv) = self.pick_float();
                if sv != sa {
                    return false;
                }
                let jv = self.fresh("jv");
                self.push(
                    jv.clone(),
                    format!("jvp({f})({a}, {v})"),
                    Ty::Tuple(vec![Ty::F(vec![]), Ty::F(vec![])]),
                );
                self.push(name, format!("{jv}[1] * {a}"), Ty::F(sa));
            }
            4 => {
                let (v, sv) = self.pick_float();
                if sv != sa {
                    return false;
                }
                self.push(name, format!("hvp({f})({a}, {v})"), Ty::F(sa));
            }
            _ => {
                self.push(name, format!("grad({f})({a})"), Ty::F(sa));
            }
        }
        true
    }
}

/// Binary primitives that are smooth even on equal arguments.
const SMOOTH_BINARY: &[&str] = &["Mul", "Add", "Sub", "RealDiv", "MatMul", "BatchMatMul"];

/// NumPy broadcasting of two shapes.
pub fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let x = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let y = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return None;
        };
    }
    Some(out)
}

/// A random factorisation of `n` into up to three sizes (`[0]` for an empty
/// tensor, which has no divisors to draw from).
fn factor(n: usize, rng: &mut Rng) -> Vec<i64> {
    if n == 0 {
        return vec![0];
    }
    let mut dims = Vec::new();
    let mut rest = n;
    for _ in 0..rng.range(0, 2) {
        let divisors: Vec<usize> = (1..=rest).filter(|d| rest.is_multiple_of(*d)).collect();
        let d = *rng.pick(&divisors);
        dims.push(d as i64);
        rest /= d;
    }
    dims.push(rest as i64);
    dims
}

fn int_literal(t: &tensor::Tensor) -> Option<String> {
    fn nest(data: &[f64], shape: &[usize]) -> String {
        match shape.split_first() {
            None => format!("{}", data[0] as i64),
            Some((&d, rest)) => {
                let step: usize = rest.iter().product();
                let items: Vec<String> = (0..d)
                    .map(|i| nest(&data[i * step..(i + 1) * step], rest))
                    .collect();
                format!("[{}]", items.join(", "))
            }
        }
    }
    if t.rank() == 0 || t.numel() == 0 || t.dtype() == DType::Bool {
        return None;
    }
    let lit = nest(&t.to_f64_vec(), t.shape());
    Some(if t.dtype() == DType::I64 {
        lit
    } else {
        format!("Cast({lit}, {})", t.dtype())
    })
}

fn float_ty(v: &AbsVal) -> Option<Ty> {
    match v {
        AbsVal::Tensor {
            dtype: DType::F64,
            shape,
        } => {
            let dims = shape.dims()?;
            let mut s = Vec::new();
            for d in dims {
                match d {
                    ir::Dim::Known(k) if *k >= 0 => s.push(*k as usize),
                    _ => return None,
                }
            }
            Some(Ty::F(s))
        }
        AbsVal::Tuple(items) => {
            let tys: Vec<Option<Ty>> = items.iter().map(float_ty).collect();
            if tys.iter().all(Option::is_none) {
                return None;
            }
            Some(Ty::Tuple(
                tys.into_iter().map(|t| t.unwrap_or(Ty::Func)).collect(),
            ))
        }
        _ => None,
    }
}

fn ty_numel(t: &Ty) -> usize {
    match t {
        Ty::F(s) => s.iter().product(),
        Ty::Tuple(items) => items.iter().map(ty_numel).sum(),
        Ty::Func => 1,
    }
}

/// Inputs the generated programs run on: away from 0 (logarithms and
/// divisions), mostly positive.
pub fn random_value(shape: &[usize], seed: u64) -> ops::KValue {
    let mut rng = Rng::new(seed);
    let n: usize = shape.iter().product();
    let data: Vec<f64> = (0..n)
        .map(|_| {
            let m = 0.3 + rng.unit();
            if rng.chance(0.25) {
                -m
            } else {
                m
            }
        })
        .collect();
    ops::KValue::Tensor(tensor::Tensor::from_f64(shape.to_vec(), data).expect("sizes"))
}

/// An attribute value the DSL can write (no infinities or NaNs).
fn finite_attr(v: &AttrValue) -> bool {
    match v {
        AttrValue::Float(x) => x.0.is_finite(),
        AttrValue::Tuple(items) => items.iter().all(finite_attr),
        _ => true,
    }
}

fn finite(v: &ops::KValue) -> bool {
    match v {
        ops::KValue::Tensor(t) => t
            .to_f64_vec()
            .iter()
            .all(|x| x.is_finite() && x.abs() < 1e6),
        ops::KValue::Tuple(items) => items.iter().all(finite),
    }
}
