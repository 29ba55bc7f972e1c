//! Einsum, and the `_EinsumEmbed` its gradient uses.
//!
//! MindSpore's `Einsum(equation)` takes a tuple of float tensors of one dtype.
//! Subscripts are letters `a-z A-Z`; each operand may hold one `...`, which
//! stands for the same dimensions in every operand that has one (MindSpore
//! does not broadcast them). A letter repeated within an operand takes the
//! diagonal. Without `->` the output is the ellipsis dimensions followed by
//! the letters that occur once, lowercase then uppercase alphabetically. An
//! empty output gives shape `[1]` (MindSpore's rule), and zero-size
//! dimensions are refused.
//!
//! The kernel lowers the equation to diagonals, sums over letters private to
//! one operand, and a chain of batched GEMMs (`linalg::batch_matmul`) with
//! transposes and reshapes, left to right. The gradient of operand `i` is
//! another Einsum, `"out,others->operand i"`, of the sensitivity and the
//! other operands; where operand `i` repeats a letter or has one no other
//! operand (nor the output) has, `_EinsumEmbed` puts that result on the
//! diagonal or broadcasts it back.

use crate::schema::Schema;
use crate::Traits;
use ir::{AbsVal, AttrValue, Dim, Shape};
use tensor::{Buffer, Tensor};

use crate::defs::elementwise::make_tensor;
use crate::defs::linalg::batch_matmul;
use crate::defs::reduce::reduce_generic;
use crate::defs::shape::{cartesian_offsets, row_strides, take, transpose_tensor};
use crate::infer::InferCall;
use crate::kernel::{KArg, KValue, KernelCall};
use crate::{
    AttrType, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef, ParamDef,
};

/// A label: a letter's index (`a-z` 0..26, `A-Z` 26..52) or an ellipsis
/// dimension (52 and up).
type Label = usize;

const ELLIPSIS: Label = 52;

fn letter_label(c: char) -> Option<Label> {
    match c {
        'a'..='z' => Some(c as usize - 'a' as usize),
        'A'..='Z' => Some(c as usize - 'A' as usize + 26),
        _ => None,
    }
}

fn label_letter(l: Label) -> char {
    if l < 26 {
        (b'a' + l as u8) as char
    } else {
        (b'A' + (l - 26) as u8) as char
    }
}

/// One side of an operand: its labels, with `ELLIPSIS` marking where `...` was.
#[derive(Debug, Clone, PartialEq)]
struct Term(Vec<Label>);

impl Term {
    fn has_ellipsis(&self) -> bool {
        self.0.contains(&ELLIPSIS)
    }

    fn letters(&self) -> usize {
        self.0.iter().filter(|&&l| l != ELLIPSIS).count()
    }

    /// The labels with the ellipsis expanded into `ell` labels 52, 53, ...
    fn expand(&self, ell: usize) -> Vec<Label> {
        let mut out = Vec::new();
        for &l in &self.0 {
            if l == ELLIPSIS {
                out.extend(ELLIPSIS..ELLIPSIS + ell);
            } else {
                out.push(l);
            }
        }
        out
    }
}

fn eq_err(msg: impl Into<String>) -> OpError {
    OpError::attr("equation", format!("`Einsum`: {}", msg.into()))
}

fn parse_term(s: &str) -> Result<Term, OpError> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("...") {
            if out.contains(&ELLIPSIS) {
                return Err(eq_err(format!("`{s}` has more than one ellipsis")));
            }
            out.push(ELLIPSIS);
            rest = &rest[3..];
            continue;
        }
        let l = letter_label(c).ok_or_else(|| {
            eq_err(format!(
                "`{s}` may hold only letters a-z, A-Z and one `...`, not `{c}`"
            ))
        })?;
        out.push(l);
        rest = &rest[c.len_utf8()..];
    }
    Ok(Term(out))
}

/// A parsed equation: the operands' terms and the output's (explicit or implied).
#[derive(Debug, Clone)]
struct Equation {
    inputs: Vec<Term>,
    output: Term,
}

fn parse_equation(eq: &str) -> Result<Equation, OpError> {
    let eq: String = eq.chars().filter(|c| !c.is_whitespace()).collect();
    if eq.is_empty() {
        return Err(eq_err("the equation is empty"));
    }
    let (left, right) = match eq.split_once("->") {
        Some((l, r)) => {
            if r.contains("->") {
                return Err(eq_err("the equation may hold only one `->`"));
            }
            (l, Some(r))
        }
        None => (eq.as_str(), None),
    };
    if left.is_empty() {
        return Err(eq_err("nothing to the left of `->`"));
    }
    let inputs: Vec<Term> = left.split(',').map(parse_term).collect::<Result<_, _>>()?;
    let output = match right {
        Some(r) => {
            let t = parse_term(r)?;
            for (k, &l) in t.0.iter().enumerate() {
                if t.0[..k].contains(&l) {
                    return Err(eq_err(format!(
                        "`{}` occurs twice right of `->`",
                        if l == ELLIPSIS {
                            "...".to_string()
                        } else {
                            label_letter(l).to_string()
                        }
                    )));
                }
                if !inputs.iter().any(|i| i.0.contains(&l)) {
                    return Err(eq_err(format!(
                        "`{}` right of `->` does not occur on the left",
                        if l == ELLIPSIS {
                            "...".to_string()
                        } else {
                            label_letter(l).to_string()
                        }
                    )));
                }
            }
            t
        }
        None => {
            let mut count = [0usize; 52];
            for t in &inputs {
                for &l in &t.0 {
                    if l < ELLIPSIS {
                        count[l] += 1;
                    }
                }
            }
            let mut out = Vec::new();
            if inputs.iter().any(Term::has_ellipsis) {
                out.push(ELLIPSIS);
            }
            out.extend((0..52).filter(|&l| count[l] == 1));
            Term(out)
        }
    };
    Ok(Equation { inputs, output })
}

/// The number of dimensions `...` stands for, from the operands' ranks
/// (`None` where a rank is unknown); an error when they disagree.
fn ellipsis_rank(eq: &Equation, ranks: &[Option<usize>]) -> Result<Option<usize>, OpError> {
    let mut ell = None;
    for (i, (t, r)) in eq.inputs.iter().zip(ranks).enumerate() {
        let Some(r) = *r else { continue };
        let k = t.letters();
        if t.has_ellipsis() {
            if r < k {
                return Err(OpError::input(
                    0,
                    format!("`Einsum`: operand {i} has rank {r}, fewer than its {k} subscripts"),
                ));
            }
            if ell.is_some_and(|e| e != r - k) {
                return Err(OpError::input(
                    0,
                    "`Einsum`: `...` must stand for the same dimensions in every operand",
                ));
            }
            ell = Some(r - k);
        } else if r != k {
            return Err(OpError::input(
                0,
                format!("`Einsum`: operand {i} has rank {r} but {k} subscripts"),
            ));
        }
    }
    Ok(ell)
}

fn check_count(eq: &Equation, n: usize) -> Result<(), OpError> {
    if eq.inputs.len() != n {
        return Err(OpError::input(
            0,
            format!(
                "`Einsum`: the equation has {} operands but {n} tensors were given",
                eq.inputs.len()
            ),
        ));
    }
    Ok(())
}

fn infer_einsum(call: &InferCall) -> Result<AbsVal, OpError> {
    let items = match &call.inputs[0] {
        AbsVal::Any => return Ok(AbsVal::Any),
        AbsVal::Tuple(items) => items,
        other => {
            return Err(OpError::input(
                0,
                format!("`Einsum` takes a tuple of tensors, not {other}"),
            ))
        }
    };
    let eq = parse_equation(call.attrs.str("equation"))?;
    check_count(&eq, items.len())?;
    let mut dtype = None;
    let mut shapes = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let (d, s) = match item {
            AbsVal::Tensor { dtype, shape } => (*dtype, shape.clone()),
            AbsVal::Any => return Ok(AbsVal::Any),
            other => {
                return Err(OpError::input(
                    0,
                    format!("`Einsum`: operand {i} is {other}, not a tensor"),
                ))
            }
        };
        if !d.is_float() {
            return Err(OpError::input(
                0,
                format!("`Einsum` needs float operands, but operand {i} is {item}"),
            ));
        }
        if dtype.is_some_and(|x| x != d) {
            return Err(OpError::input(
                0,
                format!("`Einsum` needs operands of one dtype, but operand {i} is {item}"),
            ));
        }
        dtype = Some(d);
        if let Some(dims) = s.dims() {
            if dims.contains(&Dim::Known(0)) {
                return Err(OpError::input(
                    0,
                    format!("`Einsum` refuses zero-size dimensions, but operand {i} is {item}"),
                ));
            }
        }
        shapes.push(s);
    }
    let dtype = dtype.ok_or_else(|| OpError::input(0, "`Einsum` needs at least one operand"))?;
    let ranks: Vec<Option<usize>> = shapes.iter().map(Shape::rank).collect();
    let ell = ellipsis_rank(&eq, &ranks)?;
    let Some(ell_n) = ell.or(if eq.inputs.iter().any(Term::has_ellipsis) {
        None
    } else {
        Some(0)
    }) else {
        let shape = if eq.output.has_ellipsis() {
            Shape::Unranked
        } else {
            Shape::Ranked(vec![Dim::Unknown; eq.output.0.len().max(1)])
        };
        return Ok(AbsVal::Tensor { dtype, shape });
    };
    // The size of every label, checked for agreement.
    let mut sizes: std::collections::HashMap<Label, Dim> = std::collections::HashMap::new();
    for (i, (t, s)) in eq.inputs.iter().zip(&shapes).enumerate() {
        let Some(dims) = s.dims() else { continue };
        for (l, d) in t.expand(ell_n).into_iter().zip(dims) {
            match sizes.get(&l) {
                Some(Dim::Known(a)) if matches!(d, Dim::Known(b) if b != a) => {
                    let what = if l >= ELLIPSIS {
                        "`...`".to_string()
                    } else {
                        format!("`{}`", label_letter(l))
                    };
                    return Err(OpError::input(
                        0,
                        format!(
                            "`Einsum`: {what} stands for size {a} elsewhere but {d} in operand {i}"
                        ),
                    ));
                }
                Some(Dim::Known(_)) => {}
                _ => {
                    sizes.insert(l, d.clone());
                }
            }
        }
    }
    let out: Vec<Dim> = eq
        .output
        .expand(ell_n)
        .iter()
        .map(|l| sizes.get(l).cloned().unwrap_or(Dim::Unknown))
        .collect();
    let out = if out.is_empty() {
        vec![Dim::Known(1)]
    } else {
        out
    };
    Ok(AbsVal::Tensor {
        dtype,
        shape: Shape::Ranked(out),
    })
}

// ---------------------------------------------------------------------------
// The kernel.

/// A tensor with one label per dimension.
struct Labelled {
    t: Tensor,
    labels: Vec<Label>,
}

/// The diagonal of `t` over repeated labels: one dimension per distinct label,
/// in order of first appearance.
fn diagonal(t: &Tensor, labels: &[Label]) -> Labelled {
    let mut uniq: Vec<Label> = Vec::new();
    for &l in labels {
        if !uniq.contains(&l) {
            uniq.push(l);
        }
    }
    if uniq.len() == labels.len() {
        return Labelled {
            t: t.clone(),
            labels: uniq,
        };
    }
    let strides = row_strides(t.shape());
    let mut shape = Vec::new();
    let per_dim: Vec<Vec<usize>> = uniq
        .iter()
        .map(|&u| {
            let pos: Vec<usize> = (0..labels.len()).filter(|&p| labels[p] == u).collect();
            let size = t.shape()[pos[0]];
            shape.push(size);
            let step: usize = pos.iter().map(|&p| strides[p]).sum();
            (0..size).map(|k| k * step).collect()
        })
        .collect();
    Labelled {
        t: take(t, shape, &cartesian_offsets(&per_dim)),
        labels: uniq,
    }
}

/// `x` summed over the dimensions where `mask` is true (removed).
fn sum_dims(x: &Tensor, mask: &[bool]) -> Result<Tensor, OpError> {
    let shape: Vec<usize> = x
        .shape()
        .iter()
        .zip(mask)
        .filter(|(_, &m)| !m)
        .map(|(&d, _)| d)
        .collect();
    let buffer = match x.buffer() {
        Buffer::F32(p) => Buffer::F32(
            reduce_generic(p, x.shape(), mask, 0f64, |a, v| a + v as f64)
                .into_iter()
                .map(|v| v as f32)
                .collect(),
        ),
        Buffer::F64(p) => Buffer::F64(reduce_generic(p, x.shape(), mask, 0f64, |a, v| a + v)),
        _ => return Err(OpError::input(0, "`Einsum` needs float operands")),
    };
    make_tensor(x.dtype(), shape, buffer)
}

/// Sums out the labels of `a` not in `keep`.
fn sum_out(a: Labelled, keep: &[Label]) -> Result<Labelled, OpError> {
    let mask: Vec<bool> = a.labels.iter().map(|l| !keep.contains(l)).collect();
    if !mask.contains(&true) {
        return Ok(a);
    }
    let labels = a
        .labels
        .iter()
        .copied()
        .filter(|l| keep.contains(l))
        .collect();
    Ok(Labelled {
        t: sum_dims(&a.t, &mask)?,
        labels,
    })
}

fn permute(a: &Labelled, order: &[Label]) -> Tensor {
    let perm: Vec<usize> = order
        .iter()
        .map(|l| a.labels.iter().position(|m| m == l).expect("label present"))
        .collect();
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        a.t.clone()
    } else {
        transpose_tensor(&a.t, &perm)
    }
}

fn size_of(a: &Labelled, ls: &[Label]) -> Vec<usize> {
    ls.iter()
        .map(|l| a.t.shape()[a.labels.iter().position(|m| m == l).expect("label present")])
        .collect()
}

fn reshaped(t: Tensor, shape: Vec<usize>) -> Result<Tensor, OpError> {
    t.reshaped(shape).map_err(|e| OpError::call(e.0))
}

/// The contraction of `a` and `b`, keeping the labels in `keep`, as one
/// batched GEMM.
fn contract(a: Labelled, b: Labelled, keep: &[Label]) -> Result<Labelled, OpError> {
    let in_b = |l: &Label| b.labels.contains(l);
    let batch: Vec<Label> = a
        .labels
        .iter()
        .copied()
        .filter(|l| in_b(l) && keep.contains(l))
        .collect();
    let summed: Vec<Label> = a
        .labels
        .iter()
        .copied()
        .filter(|l| in_b(l) && !keep.contains(l))
        .collect();
    let a_only: Vec<Label> = a.labels.iter().copied().filter(|l| !in_b(l)).collect();
    let b_only: Vec<Label> = b
        .labels
        .iter()
        .copied()
        .filter(|l| !a.labels.contains(l))
        .collect();
    let (bs, ms, ks, ns) = (
        size_of(&a, &batch),
        size_of(&a, &a_only),
        size_of(&a, &summed),
        size_of(&b, &b_only),
    );
    let p = |v: &[usize]| v.iter().product::<usize>();
    let (nb, m, k, n) = (p(&bs), p(&ms), p(&ks), p(&ns));
    let order_a: Vec<Label> = batch
        .iter()
        .chain(&a_only)
        .chain(&summed)
        .copied()
        .collect();
    let order_b: Vec<Label> = batch
        .iter()
        .chain(&summed)
        .chain(&b_only)
        .copied()
        .collect();
    let ta = reshaped(permute(&a, &order_a), vec![nb, m, k])?;
    let tb = reshaped(permute(&b, &order_b), vec![nb, k, n])?;
    let r = batch_matmul(&ta, &tb, false, false)?;
    let shape: Vec<usize> = bs.iter().chain(&ms).chain(&ns).copied().collect();
    Ok(Labelled {
        t: reshaped(r, shape)?,
        labels: batch.into_iter().chain(a_only).chain(b_only).collect(),
    })
}

/// Evaluates `eq` on `operands`.
fn einsum(eq: &Equation, operands: &[&Tensor]) -> Result<Tensor, OpError> {
    check_count(eq, operands.len())?;
    let dtype = operands[0].dtype();
    for (i, t) in operands.iter().enumerate() {
        if t.dtype() != dtype || !dtype.is_float() {
            return Err(OpError::input(
                0,
                format!(
                    "`Einsum` needs float operands of one dtype; operand {i} is {}",
                    t.dtype()
                ),
            ));
        }
        if t.shape().contains(&0) {
            return Err(OpError::input(
                0,
                format!("`Einsum` refuses zero-size dimensions (operand {i})"),
            ));
        }
    }
    let ranks: Vec<Option<usize>> = operands.iter().map(|t| Some(t.rank())).collect();
    let ell = ellipsis_rank(eq, &ranks)?.unwrap_or(0);
    let terms: Vec<Vec<Label>> = eq.inputs.iter().map(|t| t.expand(ell)).collect();
    for (i, (labels, t)) in terms.iter().zip(operands).enumerate() {
        for (a, &la) in labels.iter().enumerate() {
            for (j, (lb, u)) in terms.iter().zip(operands).enumerate() {
                for (b, &l) in lb.iter().enumerate() {
                    if l == la && u.shape()[b] != t.shape()[a] {
                        return Err(OpError::input(
                            0,
                            format!("`Einsum`: a label stands for {} in operand {i} but {} in operand {j}", t.shape()[a], u.shape()[b]),
                        ));
                    }
                }
            }
        }
    }
    let out_labels = eq.output.expand(ell);
    // Labels needed after operand `i`: the output's and the later operands'.
    let needed_after = |i: usize| -> Vec<Label> {
        let mut v = out_labels.clone();
        for t in &terms[i + 1..] {
            v.extend(t);
        }
        v
    };
    let mut acc: Option<Labelled> = None;
    for (i, t) in operands.iter().enumerate() {
        let d = diagonal(t, &terms[i]);
        // Labels no other operand and not the output use are summed out first.
        let mut others = out_labels.clone();
        for (j, term) in terms.iter().enumerate() {
            if j != i {
                others.extend(term);
            }
        }
        let d = sum_out(d, &others)?;
        acc = Some(match acc {
            None => d,
            Some(a) => contract(a, d, &needed_after(i))?,
        });
    }
    let acc = sum_out(acc.expect("at least one operand"), &out_labels)?;
    let t = permute(&acc, &out_labels);
    if out_labels.is_empty() {
        reshaped(t, vec![1])
    } else {
        Ok(t)
    }
}

fn k_einsum(c: &KernelCall) -> Result<KValue, OpError> {
    let operands: Vec<&Tensor> = match c.inputs.first() {
        Some(KArg::Tuple(items)) => items
            .iter()
            .map(|v| match v {
                KValue::Tensor(t) => Ok(t),
                KValue::Tuple(_) => Err(OpError::input(0, "`Einsum` takes a tuple of tensors")),
            })
            .collect::<Result<_, _>>()?,
        Some(KArg::Tensor(t)) => vec![*t],
        None => return Err(OpError::input(0, "`Einsum` takes a tuple of tensors")),
    };
    let eq = parse_equation(c.attrs.str("equation"))?;
    Ok(KValue::Tensor(einsum(&eq, &operands)?))
}

// ---------------------------------------------------------------------------
// The gradient.

fn letters(ls: &[Label], fresh: &[char]) -> String {
    ls.iter()
        .map(|&l| {
            if l >= ELLIPSIS {
                fresh[l - ELLIPSIS]
            } else {
                label_letter(l)
            }
        })
        .collect()
}

fn grad_einsum(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let Some(AbsVal::Tuple(items)) = c.input_values.first() else {
        return vec![None];
    };
    let Ok(eq) = parse_equation(c.attrs.str("equation")) else {
        return vec![None];
    };
    let ranks: Vec<Option<usize>> = items
        .iter()
        .map(|v| v.shape().and_then(|s| s.rank()))
        .collect();
    if ranks.iter().any(Option::is_none) || eq.inputs.len() != items.len() {
        return vec![None];
    }
    let ell = ellipsis_rank(&eq, &ranks).ok().flatten().unwrap_or(0);
    // Letters for the ellipsis dimensions, and one for an empty output (whose
    // shape is [1]): ones the equation does not use.
    let used: Vec<Label> = eq.inputs.iter().flat_map(|t| t.0.clone()).collect();
    let fresh: Vec<char> = (0..52)
        .filter(|l| !used.contains(l))
        .map(label_letter)
        .take(ell + 1)
        .collect();
    if fresh.len() < ell + 1 {
        return vec![None];
    }
    let terms: Vec<String> = eq
        .inputs
        .iter()
        .map(|t| letters(&t.expand(ell), &fresh))
        .collect();
    let out = letters(&eq.output.expand(ell), &fresh);
    let out = if out.is_empty() {
        fresh[ell].to_string()
    } else {
        out
    };
    let dout = c.dout;
    let n = items.len();
    let grads: Vec<GNode> = (0..n)
        .map(|i| {
            let x = b.tuple_get(c.inputs[0], i);
            let mut uniq = String::new();
            for ch in terms[i].chars() {
                if !uniq.contains(ch) {
                    uniq.push(ch);
                }
            }
            let elsewhere =
                |ch: char| out.contains(ch) || (0..n).any(|j| j != i && terms[j].contains(ch));
            let keep: String = uniq.chars().filter(|&ch| elsewhere(ch)).collect();
            let mut operands = vec![dout];
            let mut subs = vec![out.clone()];
            for j in (0..n).filter(|&j| j != i) {
                operands.push(b.tuple_get(c.inputs[0], j));
                subs.push(terms[j].clone());
            }
            let tuple = b.make_tuple(&operands);
            let equation = format!("{}->{keep}", subs.join(","));
            let g = b.prim(
                "Einsum",
                &[tuple],
                vec![("equation", AttrValue::Str(equation))],
            );
            if keep == terms[i] && !keep.is_empty() {
                g
            } else {
                b.prim(
                    "_EinsumEmbed",
                    &[g, x],
                    vec![
                        ("subscripts", AttrValue::Str(terms[i].clone())),
                        ("grad_subscripts", AttrValue::Str(keep)),
                    ],
                )
            }
        })
        .collect();
    vec![Some(b.make_tuple(&grads))]
}

// ---------------------------------------------------------------------------
// _EinsumEmbed

fn subscripts(attrs: &crate::Attrs, name: &'static str) -> Result<Vec<Label>, OpError> {
    attrs
        .str(name)
        .chars()
        .map(|c| {
            letter_label(c).ok_or_else(|| {
                OpError::attr(name, format!("`_EinsumEmbed`: `{c}` is not a letter"))
            })
        })
        .collect()
}

fn k_einsum_embed(c: &KernelCall) -> Result<KValue, OpError> {
    let (g, like) = (c.tensor(0)?, c.tensor(1)?);
    let subs = subscripts(c.attrs, "subscripts")?;
    let gsubs = subscripts(c.attrs, "grad_subscripts")?;
    if subs.len() != like.rank() {
        return Err(OpError::attr(
            "subscripts",
            format!(
                "`_EinsumEmbed`: {} subscripts for a rank-{} tensor",
                subs.len(),
                like.rank()
            ),
        ));
    }
    let mut uniq: Vec<Label> = Vec::new();
    for &l in &subs {
        if !uniq.contains(&l) {
            uniq.push(l);
        }
    }
    let size = |l: Label| like.shape()[subs.iter().position(|&m| m == l).expect("present")];
    let gshape: Vec<usize> = gsubs.iter().map(|&l| size(l)).collect();
    if g.numel() != gshape.iter().product::<usize>() || gsubs.iter().any(|l| !uniq.contains(l)) {
        return Err(OpError::call(format!(
            "`_EinsumEmbed`: a gradient of shape {:?} does not fit `{}` of {:?}",
            g.shape(),
            c.attrs.str("grad_subscripts"),
            like.shape()
        )));
    }
    let lstrides = row_strides(like.shape());
    let gstrides = row_strides(&gshape);
    let like_per: Vec<Vec<usize>> = uniq
        .iter()
        .map(|&u| {
            let step: usize = (0..subs.len())
                .filter(|&p| subs[p] == u)
                .map(|p| lstrides[p])
                .sum();
            (0..size(u)).map(|k| k * step).collect()
        })
        .collect();
    let g_per: Vec<Vec<usize>> = uniq
        .iter()
        .map(|&u| {
            let step = gsubs
                .iter()
                .position(|&m| m == u)
                .map_or(0, |p| gstrides[p]);
            (0..size(u)).map(|k| k * step).collect()
        })
        .collect();
    let dst = cartesian_offsets(&like_per);
    let src = cartesian_offsets(&g_per);
    let gv = g.to_f64_vec();
    let mut out = vec![0.0; like.numel()];
    for (&d, &s) in dst.iter().zip(&src) {
        out[d] = gv[s];
    }
    let t = Tensor::from_f64(like.shape().to_vec(), out).map_err(|e| OpError::call(e.0))?;
    Ok(KValue::Tensor(t.cast(g.dtype())))
}

fn infer_einsum_embed(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, _) = call.tensor(0)?;
    let (_, shape) = call.tensor(1)?;
    subscripts(call.attrs, "subscripts")?;
    subscripts(call.attrs, "grad_subscripts")?;
    Ok(AbsVal::Tensor { dtype, shape })
}

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "Einsum",
        category: Category::LinearAlgebra,
        doc: "Einstein summation over a tuple of float tensors, as `equation` says (`\"ij,jk->ik\"`, `\"bhqd,bhkd->bhqk\"`, `\"...ij->...ji\"`, `\"ii->i\"`): letters name dimensions, a letter repeated in one operand takes a diagonal, letters missing from the output are summed. Without `->` the output is `...` then the letters that occur once, in alphabetical order (lowercase first); an empty output has shape `[1]`.",
        schema: Schema::ms(
            &[],
            &[
                ("inputs", "A tuple of float tensors of one dtype, one per operand of the equation."),
                ("equation", "The subscripts, `\"in1,in2,...->out\"` or without `->`; letters `a-z A-Z` and at most one `...` per operand."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_einsum,
        grad: Some(grad_einsum),
        kernel: Some(k_einsum),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_EinsumEmbed",
        category: Category::Internal,
        doc: "Zeros of `like`'s shape with `grad` (whose dimensions are the letters `grad_subscripts`) placed where `like`'s `subscripts` take it: on the diagonal where a letter repeats, broadcast along letters `grad_subscripts` lacks. The gradient of an Einsum operand with repeated or private letters.",
        schema: Schema::own(&[
            ParamDef::input("grad", "The gradient over the distinct letters `grad_subscripts` (shape `[1]` when there are none)."),
            ParamDef::input("like", "The operand whose shape the result has."),
            ParamDef::attr("subscripts", AttrType::Str(&[]), None, "The operand's letters, one per dimension of `like`."),
            ParamDef::attr("grad_subscripts", AttrType::Str(&[]), None, "The letters of `grad`'s dimensions, distinct, each among `subscripts`."),
        ]),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_einsum_embed,
        grad: Some(|b, c| {
            // The adjoint takes the diagonal and sums over the broadcast letters.
            let eq = format!("{}->{}", c.attrs.str("subscripts"), c.attrs.str("grad_subscripts"));
            let t = b.make_tuple(&[c.dout]);
            vec![
                Some(b.prim("Einsum", &[t], vec![("equation", AttrValue::Str(eq))])),
                None,
            ]
        }),
        kernel: Some(k_einsum_embed),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let r = random_f64;
    let eq = |s: &str| AttrValue::Str(s.to_string());
    let tup = |v: Vec<KValue>| KValue::Tuple(v);
    vec![
        Sample::new(
            "Einsum",
            vec![tup(vec![
                r(&[2, 3], 500, -1.0, 1.0),
                r(&[3, 4], 501, -1.0, 1.0),
            ])],
        )
        .attr("equation", eq("ij,jk->ik")),
        Sample::new(
            "Einsum",
            vec![tup(vec![
                r(&[2, 2, 3, 4], 502, -1.0, 1.0),
                r(&[2, 2, 5, 4], 503, -1.0, 1.0),
            ])],
        )
        .attr("equation", eq("bhqd,bhkd->bhqk")),
        Sample::new("Einsum", vec![tup(vec![r(&[3, 3], 504, -1.0, 1.0)])])
            .attr("equation", eq("ii->i")),
        Sample::new("Einsum", vec![tup(vec![r(&[3, 3], 505, -1.0, 1.0)])])
            .attr("equation", eq("ii")),
        Sample::new("Einsum", vec![tup(vec![r(&[2, 3, 4], 506, -1.0, 1.0)])])
            .attr("equation", eq("...ij->...ji")),
        Sample::new(
            "Einsum",
            vec![tup(vec![
                r(&[2, 3], 507, -1.0, 1.0),
                r(&[3], 508, -1.0, 1.0),
                r(&[3, 4], 509, -1.0, 1.0),
            ])],
        )
        .attr("equation", eq("ij,j,jk->ki")),
        Sample::new(
            "Einsum",
            vec![tup(vec![
                r(&[2, 3], 510, -1.0, 1.0),
                r(&[4], 511, -1.0, 1.0),
            ])],
        )
        .attr("equation", eq("ij,k")),
        Sample::new(
            "Einsum",
            vec![tup(vec![
                r(&[2, 3], 512, -1.0, 1.0),
                r(&[2, 3], 513, -1.0, 1.0),
            ])],
        )
        .attr("equation", eq("ij,ij->")),
        Sample::new(
            "_EinsumEmbed",
            vec![r(&[3], 514, -1.0, 1.0), r(&[3, 2, 3], 515, -1.0, 1.0)],
        )
        .attr("subscripts", eq("iji"))
        .attr("grad_subscripts", eq("i")),
        Sample::new(
            "_EinsumEmbed",
            vec![r(&[1], 516, -1.0, 1.0), r(&[2, 2], 517, -1.0, 1.0)],
        )
        .attr("subscripts", eq("ij"))
        .attr("grad_subscripts", eq("")),
    ]
}
