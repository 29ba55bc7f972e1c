//! The linear-algebra helpers: Trace's gradient, and `_EinsumEmbed` (an
//! Einsum operand's gradient with repeated or private letters).

use ir::{AttrValue, NodeId};

use super::{ints, Call, Emit};

pub(super) fn lower(e: &mut Emit, c: &Call) -> Option<NodeId> {
    match c.name() {
        "_TraceGrad" => {
            // `grad` on the diagonal: `Eye(n, m) · grad`.
            let like = c.shape(1)?;
            let [n, m] = like.as_slice() else {
                return None;
            };
            let (n, m) = (n.known()?, m.known()?);
            let eye = e.prim(
                "Eye",
                vec![
                    ("n", AttrValue::Int(n)),
                    ("m", AttrValue::Int(m)),
                    ("dtype", AttrValue::DType(c.dtype(0)?)),
                ],
                &[],
            );
            Some(e.prim("Mul", Vec::new(), &[eye, c.args[0]]))
        }
        "_EinsumEmbed" => einsum_embed(e, c),
        _ => None,
    }
}

/// `_EinsumEmbed(grad, like)`: `grad`, over the distinct letters
/// `grad_subscripts`, put on `like`'s `subscripts`: transposed into the
/// order the letters first occur in `subscripts`, broadcast along the
/// letters it lacks (`BroadcastTo`), and, where a letter repeats, reshaped
/// with size 1 at the repeats and multiplied by the diagonal's 0/1 mask (a
/// constant: `like`'s sizes must be known).
fn einsum_embed(e: &mut Emit, c: &Call) -> Option<NodeId> {
    let [grad, _] = *c.args else {
        return None;
    };
    let subs: Vec<char> = c.attr("subscripts")?.as_str()?.chars().collect();
    let gsubs: Vec<char> = c.attr("grad_subscripts")?.as_str()?.chars().collect();
    let like = c.shape(1)?;
    if like.len() != subs.len() {
        return None;
    }
    let sizes: Vec<i64> = like.iter().map(|d| d.known()).collect::<Option<_>>()?;
    let size = |l: char| sizes[subs.iter().position(|&m| m == l).expect("a letter of like")];
    let mut uniq: Vec<char> = Vec::new();
    for &l in &subs {
        if !uniq.contains(&l) {
            uniq.push(l);
        }
    }
    if gsubs.iter().any(|l| !uniq.contains(l)) {
        return None;
    }
    // `grad`'s letters in `uniq`'s order.
    let present: Vec<char> = uniq.iter().copied().filter(|l| gsubs.contains(l)).collect();
    let mut out = grad;
    if present != gsubs {
        let perm: Vec<i64> = present
            .iter()
            .map(|l| gsubs.iter().position(|m| m == l).expect("present") as i64)
            .collect();
        out = e.prim("Transpose", vec![("input_perm", ints(&perm))], &[out]);
    }
    let spread: Vec<i64> = uniq
        .iter()
        .map(|&l| if gsubs.contains(&l) { size(l) } else { 1 })
        .collect();
    out = e.prim("Reshape", vec![("shape", ints(&spread))], &[out]);
    let full: Vec<i64> = uniq.iter().map(|&l| size(l)).collect();
    if spread != full {
        out = e.prim("BroadcastTo", vec![("shape", ints(&full))], &[out]);
    }
    if uniq.len() == subs.len() {
        return Some(out);
    }
    // Each letter at its first occurrence, size 1 at its repeats.
    let first: Vec<i64> = (0..subs.len())
        .map(|p| {
            if subs[..p].contains(&subs[p]) {
                1
            } else {
                sizes[p]
            }
        })
        .collect();
    out = e.prim("Reshape", vec![("shape", ints(&first))], &[out]);
    let dims: Vec<usize> = sizes.iter().map(|&s| s as usize).collect();
    let count: usize = dims.iter().product();
    let mut mask = Vec::with_capacity(count);
    let mut index = vec![0usize; dims.len()];
    for _ in 0..count {
        let on_diagonal = (0..subs.len()).all(|p| {
            let q = subs.iter().position(|&m| m == subs[p]).expect("present");
            index[p] == index[q]
        });
        mask.push(if on_diagonal { 1.0 } else { 0.0 });
        for d in (0..dims.len()).rev() {
            index[d] += 1;
            if index[d] < dims[d] {
                break;
            }
            index[d] = 0;
        }
    }
    let mask = tensor::Tensor::from_f64(dims, mask).ok()?.cast(c.dtype(0)?);
    let mask = e.constant(mask);
    Some(e.prim("Mul", Vec::new(), &[out, mask]))
}
